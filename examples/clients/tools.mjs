// Shared by the Node example clients: the tools every bundled recording calls, and output.
// The schemas are deliberately loose (no required fields): the recordings call get_weather with
// {city, days} or {location, unit, days, hourly} and get_time with {city, days} or {timezone}.

export const MODEL = 'gpt-stub';
export const PROMPT = 'What is the weather in Shenzhen, and the time in Hangzhou?';

export const PARAMETERS = {
  get_weather: {
    type: 'object',
    properties: {
      city: { type: 'string' },
      location: { type: 'string' },
      unit: { type: 'string' },
      days: { type: 'integer' },
      hourly: { type: 'boolean' },
    },
  },
  get_time: {
    type: 'object',
    properties: {
      city: { type: 'string' },
      days: { type: 'integer' },
      timezone: { type: 'string' },
    },
  },
};

/** The tools to declare: SSE_REPLAY_TOOLS (a JSON array of names, set by `sse-replay test`) and the
 * bundled recordings' get_weather and get_time. */
export function toolNames() {
  const declared = JSON.parse(process.env.SSE_REPLAY_TOOLS || '[]');
  return [...new Set([...Object.keys(PARAMETERS), ...declared])];
}

/** A tool's loose JSON schema: the one above, else an object with any properties. */
export function parameters(name) {
  return PARAMETERS[name] ?? { type: 'object', properties: {} };
}

/** OPENAI_BASE_URL (with /v1), else SSE_REPLAY_URL + v1. */
export function openaiBaseURL() {
  if (process.env.OPENAI_BASE_URL) return process.env.OPENAI_BASE_URL;
  if (process.env.SSE_REPLAY_URL) return process.env.SSE_REPLAY_URL.replace(/\/$/, '') + '/v1';
  return undefined;
}

/** Print the client contract's JSON: an array of {name, arguments, id}. */
export function emit(calls) {
  process.stdout.write(JSON.stringify(calls) + '\n');
}
