//! async-openai 0.43, `client.chat().create_stream(request)`: the tool-call chunks accumulated
//! the way the crate's `examples/tool-call-stream` does (a Vec indexed by the chunk's `index`,
//! `id` and `name` replaced when present, `arguments` appended), then printed in the client
//! contract's JSON. `Client::new()` reads OPENAI_BASE_URL (with /v1) and OPENAI_API_KEY, which
//! `sse-replay test` sets. A stream error is printed on stderr and the program exits 1.

use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionRequestUserMessage, ChatCompletionTool,
    ChatCompletionTools, CreateChatCompletionRequestArgs, FunctionObjectArgs,
};
use async_openai::Client;
use futures::StreamExt;
use serde_json::json;

const PROMPT: &str = "What is the weather in Shenzhen, and the time in Hangzhou?";

/// The tools every bundled recording calls, with loose schemas (as ../tools.py).
fn tools() -> Result<Vec<ChatCompletionTools>, Box<dyn std::error::Error>> {
    let schemas = [
        (
            "get_weather",
            json!({"type": "object", "properties": {
                "city": {"type": "string"}, "location": {"type": "string"}, "unit": {"type": "string"},
                "days": {"type": "integer"}, "hourly": {"type": "boolean"}}}),
        ),
        (
            "get_time",
            json!({"type": "object", "properties": {
                "city": {"type": "string"}, "days": {"type": "integer"}, "timezone": {"type": "string"}}}),
        ),
    ];
    let mut tools = Vec::new();
    for (name, parameters) in schemas {
        let function = FunctionObjectArgs::default()
            .name(name)
            .description(name)
            .parameters(parameters)
            .build()?;
        tools.push(ChatCompletionTools::Function(ChatCompletionTool { function }));
    }
    Ok(tools)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::new();
    let request = CreateChatCompletionRequestArgs::default()
        .model("gpt-stub")
        .messages(ChatCompletionRequestUserMessage::from(PROMPT))
        .tools(tools()?)
        .build()?;

    let mut stream = client.chat().create_stream(request).await?;
    let mut tool_calls: Vec<ChatCompletionMessageToolCall> = Vec::new();
    while let Some(result) = stream.next().await {
        let response = result?;
        for choice in response.choices {
            for chunk in choice.delta.tool_calls.unwrap_or_default() {
                let index = chunk.index as usize;
                while tool_calls.len() <= index {
                    tool_calls.push(ChatCompletionMessageToolCall {
                        id: String::new(),
                        function: Default::default(),
                    });
                }
                let tool_call = &mut tool_calls[index];
                if let Some(id) = chunk.id {
                    tool_call.id = id;
                }
                if let Some(function_chunk) = chunk.function {
                    if let Some(name) = function_chunk.name {
                        tool_call.function.name = name;
                    }
                    if let Some(arguments) = function_chunk.arguments {
                        tool_call.function.arguments.push_str(&arguments);
                    }
                }
            }
        }
    }

    let calls: Vec<_> = tool_calls
        .iter()
        .map(|tc| json!({"name": tc.function.name, "arguments": tc.function.arguments, "id": tc.id}))
        .collect();
    println!("{}", serde_json::Value::Array(calls));
    Ok(())
}
