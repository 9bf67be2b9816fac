//! Keeping a proxied request's path inside the upstream's path prefix (dot segments, encoded or
//! not, never climb out of it). Used by [`super::proxy`].

/// Resolves dot segments in a request path so that it cannot climb out of the upstream's path
/// prefix. Percent-encoded dots, slashes and backslashes (`%2e`, `%2f`, `%5c`, any case) are decoded
/// first and backslashes count as slashes, as the URL standard and many servers treat them, so
/// `/../x`, `/%2e%2e/x`, `/..%2fx` and `/..\x` all climb. Returns the path to append to the prefix:
/// the original, byte for byte, when it has no dot segment; the resolved path when it has some and
/// stays inside; `None` when it would leave the prefix (or is not an origin-form path).
pub fn confine_path(path: &str) -> Option<String> {
    if path.is_empty() {
        return Some("/".to_owned());
    }
    if !path.starts_with('/') {
        return None;
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let escaped = (b == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(
                |hex| match [hex[0].to_ascii_lowercase(), hex[1].to_ascii_lowercase()] {
                    [b'2', b'e'] => Some(b'.'),
                    [b'2', b'f'] | [b'5', b'c'] => Some(b'/'),
                    _ => None,
                },
            );
        match escaped {
            Some(c) => {
                decoded.push(c);
                i += 3;
            }
            None => {
                decoded.push(if b == b'\\' { b'/' } else { b });
                i += 1;
            }
        }
    }
    let segments: Vec<&[u8]> = decoded[1..].split(|&b| b == b'/').collect();
    if !segments.iter().any(|s| *s == b"." || *s == b"..") {
        return Some(path.to_owned());
    }
    // RFC 3986 section 5.2.4 (remove_dot_segments), failing instead of clamping at the root.
    let mut out: Vec<&[u8]> = Vec::with_capacity(segments.len());
    let last = segments.len() - 1;
    for (k, seg) in segments.iter().enumerate() {
        match *seg {
            b"." => {}
            b".." => {
                out.pop()?;
            }
            s => out.push(s),
        }
        if k == last && (*seg == b"." || *seg == b"..") {
            out.push(b""); // `/a/.` and `/a/b/..` end in a slash
        }
    }
    let mut resolved = Vec::with_capacity(decoded.len());
    for seg in out {
        resolved.push(b'/');
        resolved.extend_from_slice(seg);
    }
    if resolved.is_empty() {
        resolved.push(b'/');
    }
    // Only ASCII bytes were replaced by ASCII bytes, so this stays valid UTF-8.
    String::from_utf8(resolved).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_prefix() {
        // (request path, what is appended to the upstream prefix; None = refused with 400)
        let cases: &[(&str, Option<&str>)] = &[
            ("/v1/chat/completions", Some("/v1/chat/completions")),
            ("", Some("/")),
            ("/", Some("/")),
            ("//double//slash", Some("//double//slash")),
            ("/models/a%2Fb", Some("/models/a%2Fb")),
            ("/%41bc", Some("/%41bc")),
            ("/a/./b", Some("/a/b")),
            ("/a/b/..", Some("/a/")),
            ("/a/.", Some("/a/")),
            ("/a/../b", Some("/b")),
            ("/a/%2e%2E/b", Some("/b")),
            ("/a/..", Some("/")),
            ("/..", None),
            ("/../x", None),
            ("/../../admin/json", None),
            ("/a/../../x", None),
            ("/%2e%2e/x", None),
            ("/%2E%2E/x", None),
            ("/.%2e/x", None),
            ("/%2e./x", None),
            ("/..%2fx", None),
            ("/..%2F..%2Fx", None),
            ("/..%5cx", None),
            ("/..%5Cx", None),
            ("/..\\x", None),
            ("/a\\..\\..\\x", None),
            ("*", None),
            ("x/../y", None),
            ("/%2", Some("/%2")),
            ("/%", Some("/%")),
            ("/é/../ü", Some("/ü")),
        ];
        for (path, want) in cases {
            assert_eq!(confine_path(path).as_deref(), *want, "{path:?}");
        }
    }

    #[test]
    fn a_confined_path_never_climbs_when_parsed_as_a_url() {
        // Whatever confine_path lets through, the URL parser (which resolves dot segments itself)
        // keeps under the prefix.
        let tails = [
            "/a/../b",
            "/x/%2e%2e/y",
            "/a/./b/../c",
            "/models/a%2Fb",
            "/a/b/..",
        ];
        for tail in tails {
            let confined = confine_path(tail).unwrap();
            let url = reqwest::Url::parse(&format!("http://h/api/v1{confined}")).unwrap();
            assert!(
                url.path().starts_with("/api/v1/"),
                "{tail} → {}",
                url.path()
            );
        }
    }
}
