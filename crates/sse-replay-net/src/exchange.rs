//! What the proxy reports about each request it forwards, for a request list people can inspect
//! (the app's Proxy panel): when it started, the model asked for, the status, the response head's
//! and first byte's times, the size, and the request and response heads and request body.
//!
//! Everything here is redacted ([`sse_replay_core::redact`]) whatever `--keep-secrets` says for the
//! captures: it is for display. The request body is cut to [`SHOWN_BODY_BYTES`].

use sse_replay_core::recording::{self, RequestInfo};

/// How much of a request body an [`Exchange`] carries for display.
pub const SHOWN_BODY_BYTES: usize = 64 * 1024;

/// One request through the proxy, reported when the response head arrives (or the request fails).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// The proxy's number for this request (from 1), also carried by its capture's
    /// [`super::proxy::ProxyEvent::CaptureStarted`].
    pub id: u64,
    /// When the request arrived, UTC (RFC 3339).
    pub started: String,
    pub method: String,
    /// The request path as the client sent it (no query: it may hold keys).
    pub path: String,
    /// The upstream URL (redacted).
    pub url: String,
    /// `model` from the JSON request body, if any.
    pub model: Option<String>,
    /// The headers forwarded upstream (redacted).
    pub request_headers: Vec<(String, String)>,
    /// The request body (redacted; at most [`SHOWN_BODY_BYTES`]).
    pub request_body: String,
    /// The response status (502/504 when the upstream failed, 400 when refused).
    pub status: u16,
    /// The response headers (redacted); empty when the upstream was not reached.
    pub response_headers: Vec<(String, String)>,
    /// Microseconds from forwarding the request to the response head.
    pub head_micros: u64,
    /// Why the request failed before a response, if it did.
    pub error: Option<String>,
}

/// The end of an exchange's response body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangeEnd {
    pub id: u64,
    /// Microseconds from forwarding the request to the first body byte (`None`: empty body).
    pub first_byte_micros: Option<u64>,
    /// Microseconds from forwarding the request to the body's end.
    pub duration_micros: u64,
    /// Body bytes passed to the client.
    pub bytes: u64,
    /// Why the body ended early, if it did.
    pub error: Option<String>,
}

/// `model` from a JSON request body (`{"model": "gpt-4o-mini", …}`).
pub fn model_of(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    v.get("model")?.as_str().map(str::to_owned)
}

/// The display copy of a request: redacted, body cut to [`SHOWN_BODY_BYTES`] (on a character
/// boundary).
pub fn shown_request(info: &RequestInfo) -> (Vec<(String, String)>, String, Option<String>) {
    let mut shown = info.clone();
    shown.redact();
    let model = model_of(&info.body);
    let mut body = shown.body;
    if body.len() > SHOWN_BODY_BYTES {
        let mut end = SHOWN_BODY_BYTES;
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        body.truncate(end);
        body.push('…');
    }
    (shown.headers, body, model)
}

/// Response headers for display (redacted).
pub fn shown_headers(mut headers: Vec<(String, String)>) -> Vec<(String, String)> {
    recording::redact_headers(&mut headers);
    headers
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_shown_request_is_redacted_cut_and_names_the_model() {
        let body = format!(
            r#"{{"model":"gpt-4o-mini","api_key":"sk-body","pad":"{}"}}"#,
            "x".repeat(SHOWN_BODY_BYTES)
        );
        let info = RequestInfo {
            method: "POST".into(),
            url: "https://h/v1?key=k-url".into(),
            headers: vec![("Authorization".into(), "Bearer sk-live".into())],
            body,
        };
        let (headers, body, model) = shown_request(&info);
        assert_eq!(model.as_deref(), Some("gpt-4o-mini"));
        assert!(!format!("{headers:?}").contains("sk-live"));
        assert!(!body.contains("sk-body"), "{}", &body[..80]);
        assert!(body.len() <= SHOWN_BODY_BYTES + '…'.len_utf8());
        assert_eq!(model_of("not json"), None);
        assert_eq!(model_of(r#"{"model":3}"#), None);
    }
}
