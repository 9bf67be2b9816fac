// openai-node, the `client.chat.completions.stream()` helper → `finalChatCompletion()`.
import OpenAI from 'openai';
import { MODEL, PROMPT, emit, openaiBaseURL, parameters, toolNames } from './tools.mjs';

const client = new OpenAI({ baseURL: openaiBaseURL(), apiKey: 'sk-dummy', maxRetries: 0 });
const stream = client.chat.completions.stream({
  model: MODEL,
  messages: [{ role: 'user', content: PROMPT }],
  tools: toolNames().map((name) => ({
    type: 'function',
    function: { name, description: name, parameters: parameters(name) },
  })),
});
const completion = await stream.finalChatCompletion();
emit(
  (completion.choices[0]?.message?.tool_calls ?? []).map((tc) => ({
    name: tc.function.name,
    arguments: tc.function.arguments,
    id: tc.id,
  })),
);
