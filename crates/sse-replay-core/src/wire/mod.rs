//! Bytes to events: the WHATWG event-stream algorithm ([`sse`]), binary AWS frames
//! ([`aws_eventstream`]), a JSON array streamed element by element ([`json_array`]), the one
//! [`framing::Framer`] that picks among them and JSON lines, and cutting a body into reads
//! ([`chunking`]). It knows byte spans and limits, never dialects or calls.

pub mod aws_eventstream;
pub mod chunking;
pub mod framing;
pub mod json_array;
pub mod sse;
