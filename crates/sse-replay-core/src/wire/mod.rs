//! Bytes to events: the WHATWG event-stream algorithm ([`sse`]), binary AWS frames
//! ([`aws_eventstream`]), a JSON array streamed element by element ([`json_array`]), the one
//! [`framing::Framer`] that picks among them and JSON lines, cutting a body into reads
//! ([`chunking`]) and the one lenient base64 decoder. It knows byte spans and limits, never
//! dialects or calls.

pub mod aws_eventstream;
pub(crate) mod base64;
pub mod chunking;
pub mod framing;
pub mod json_array;
pub mod sse;
