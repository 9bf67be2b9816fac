//! Header helpers shared by the recorder and the proxy: `-H 'Name: value'` parsing with `$VAR`
//! expansion from the environment (so keys stay out of shell history), hop-by-hop header rules
//! (RFC 9110 §7.6.1), and the provider's message in an error body.

/// Why a `-H` argument was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// No `:` between name and value.
    #[error("expected 'Name: value' in header {0:?}")]
    NoColon(String),
    /// The name is empty or has characters HTTP does not allow.
    #[error("invalid header name {0:?}")]
    BadName(String),
    /// `$VAR` names a variable that is not set. The value is never shown (it may be half a key).
    #[error("environment variable {var} is not set (used in header {header})")]
    MissingVar { var: String, header: String },
    /// The value has characters HTTP does not allow (e.g. a newline).
    #[error("invalid value for header {0}")]
    BadValue(String),
}

/// Parses `Name: value`, expanding `$VAR` and `${VAR}` in the value through `lookup` (the process
/// environment in the CLI). `$$` is a literal `$`; a `$` not followed by a name stays as it is.
pub fn parse_header(
    arg: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<(String, String), HeaderError> {
    let (name, value) = arg
        .split_once(':')
        .ok_or_else(|| HeaderError::NoColon(arg.to_owned()))?;
    let name = name.trim();
    if name.is_empty() || hyper::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(HeaderError::BadName(name.to_owned()));
    }
    let value = expand_env(value.trim(), &lookup).map_err(|var| HeaderError::MissingVar {
        var,
        header: name.to_owned(),
    })?;
    if hyper::header::HeaderValue::from_str(&value).is_err() {
        return Err(HeaderError::BadValue(name.to_owned()));
    }
    Ok((name.to_owned(), value))
}

/// Expands `$VAR` / `${VAR}` (names: letters, digits, `_`; not starting with a digit). Returns the
/// missing variable's name on error.
pub fn expand_env(value: &str, lookup: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
            continue;
        }
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) if is_var_name(&braced[..end]) => (&braced[..end], &braced[end + 1..]),
                _ => ("", after),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if is_var_name(&after[..end]) {
                (&after[..end], &after[end..])
            } else {
                ("", after)
            }
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        out.push_str(&lookup(name).ok_or_else(|| name.to_owned())?);
        rest = tail;
    }
    out.push_str(rest);
    Ok(out)
}

fn is_var_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The process environment, for [`parse_header`].
pub fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Hop-by-hop headers (RFC 9110 §7.6.1), which a proxy must not forward, plus `Host` (rewritten for
/// the upstream) and `Content-Length` (recomputed for the forwarded body).
pub fn is_hop_by_hop(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "te"
            | "trailer"
            | "trailers"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
    ) || name.starts_with("proxy-")
}

/// Header names listed in a `Connection` header are hop-by-hop for that message too.
pub fn connection_listed(headers: &hyper::HeaderMap) -> Vec<String> {
    headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A header map as `(name, value)` pairs (lossy for non-UTF-8 values), in order.
pub fn header_pairs(headers: &hyper::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// Whether a `Content-Type` value is an event stream: server-sent events, or binary AWS event
/// stream frames (Bedrock's ConverseStream and InvokeModelWithResponseStream).
pub fn is_event_stream(content_type: Option<&str>) -> bool {
    use sse_replay_core::framing::Framing;
    matches!(
        content_type.map(sse_replay_core::content::stream_type),
        Some(Some(Framing::Sse | Framing::AwsEventStream))
    )
}

/// The provider's message in an error body: `error.message` (OpenAI, Anthropic, Gemini), `message`,
/// `error` as a string, `detail`; otherwise the first line of the body, shortened.
pub fn provider_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        let candidates = [
            v.pointer("/error/message"),
            v.get("message"),
            v.get("error").filter(|e| e.is_string()),
            v.get("detail").filter(|e| e.is_string()),
            v.pointer("/0/error/message"),
        ];
        if let Some(m) = candidates.into_iter().flatten().find_map(|m| m.as_str()) {
            return shorten(m);
        }
    }
    // An SSE error event: take its data line.
    for line in text.lines() {
        if let Some(data) = line.strip_prefix("data:")
            && let Ok(v) = serde_json::from_str::<serde_json::Value>(data.trim())
            && let Some(m) = v.pointer("/error/message").and_then(|m| m.as_str())
        {
            return shorten(m);
        }
    }
    shorten(text.lines().next().unwrap_or_default())
}

fn shorten(s: &str) -> String {
    const MAX: usize = 200;
    if s.chars().count() <= MAX {
        s.to_owned()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "KEY" => Some("sk-123".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_variables() {
        let cases = [
            ("Bearer $KEY", "Bearer sk-123"),
            ("Bearer ${KEY}", "Bearer sk-123"),
            ("${KEY}x$KEY.y", "sk-123xsk-123.y"),
            ("cost $$5", "cost $5"),
            ("a $ b", "a $ b"),
            ("$1", "$1"),
            ("${", "${"),
            ("$EMPTY!", "!"),
        ];
        for (input, want) in cases {
            assert_eq!(expand_env(input, &env).unwrap(), want, "{input}");
        }
        assert_eq!(expand_env("Bearer $NOPE", &env), Err("NOPE".into()));
    }

    #[test]
    fn parses_headers() {
        assert_eq!(
            parse_header("Authorization: Bearer $KEY", env).unwrap(),
            ("Authorization".into(), "Bearer sk-123".into())
        );
        assert_eq!(
            parse_header("x:y:z", env).unwrap(),
            ("x".into(), "y:z".into())
        );
        assert!(matches!(
            parse_header("novalue", env),
            Err(HeaderError::NoColon(_))
        ));
        assert!(matches!(
            parse_header("bad name: v", env),
            Err(HeaderError::BadName(_))
        ));
        let missing = parse_header("x-api-key: $NOPE", env)
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("NOPE") && missing.contains("x-api-key"),
            "{missing}"
        );
    }

    #[test]
    fn hop_by_hop() {
        for h in [
            "Connection",
            "keep-alive",
            "Proxy-Authorization",
            "TE",
            "Trailer",
            "Transfer-Encoding",
            "Upgrade",
            "Host",
        ] {
            assert!(is_hop_by_hop(h), "{h}");
        }
        for h in ["Authorization", "Content-Type", "Accept", "x-api-key"] {
            assert!(!is_hop_by_hop(h), "{h}");
        }
    }

    #[test]
    fn provider_messages() {
        assert_eq!(provider_message(br#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#), "Incorrect API key provided");
        assert_eq!(
            provider_message(
                br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(provider_message(br#"{"message":"nope"}"#), "nope");
        assert_eq!(
            provider_message(b"Internal Server Error\nmore"),
            "Internal Server Error"
        );
        assert!(is_event_stream(Some("text/event-stream; charset=utf-8")));
        assert!(is_event_stream(Some("application/vnd.amazon.eventstream")));
        assert!(!is_event_stream(Some("application/json")));
    }
}
