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
    if !path.starts_with('/') || smuggles_dot_segment(path) {
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

/// Whether `path` hides a dot segment that an upstream decoding differently from this proxy
/// could see: a segment that is `.` or `..` only after decoding twice or more (`%252e%252e`),
/// after reading an overlong UTF-8 form as its ASCII character (`%c0%ae` = `.`, `%c0%af` = `/`),
/// or after dropping a `;` path parameter (`..;` in Tomcat and Spring). Such a path is refused
/// (there is no one right way to resolve it), whether or not it would climb out.
fn smuggles_dot_segment(path: &str) -> bool {
    let dots = |bytes: &[u8], params: bool| {
        bytes
            .split(|&b| b == b'/' || b == b'\\')
            .filter(|seg| {
                let seg = if params {
                    seg.split(|&b| b == b';').next().unwrap_or_default()
                } else {
                    seg
                };
                seg == b"." || seg == b".."
            })
            .count()
    };
    // What this proxy itself treats as dot segments: one decoding of `%2e`, `%2f`, `%5c`.
    let once = decode_all(path.as_bytes());
    let shallow = dots(&decode_dots_once(path.as_bytes()), false);
    // Decoded until nothing changes (at most a few times), overlong forms read as ASCII.
    let mut deep = once;
    for _ in 0..4 {
        let next = decode_all(&deep);
        if next == deep {
            break;
        }
        deep = next;
    }
    let deep = read_overlong(&deep);
    dots(&deep, true) > shallow
}

/// Every `%XX` escape decoded once (an invalid one left as it is).
fn decode_all(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Only the escapes [`confine_path`] decodes itself (`%2e`, `%2f`, `%5c`), as it decodes them.
fn decode_dots_once(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
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
                out.push(c);
                i += 3;
            }
            None => {
                out.push(if bytes[i] == b'\\' { b'/' } else { bytes[i] });
                i += 1;
            }
        }
    }
    out
}

/// Overlong UTF-8 forms of ASCII characters (2 and 3 bytes: `C0 AE`, `E0 80 AE`) replaced by
/// the character a lenient decoder would read.
fn read_overlong(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i..] {
            [a @ (0xC0 | 0xC1), b, ..] if b & 0xC0 == 0x80 => {
                out.push(((a & 0x1F) << 6) | (b & 0x3F));
                i += 2;
            }
            [0xE0, b, c, ..] if b & 0xE0 == 0x80 && c & 0xC0 == 0x80 => {
                out.push(((b & 0x3F) << 6) | (c & 0x3F));
                i += 3;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    out
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
            // Dot segments only another decoder sees: refused.
            ("/..;/x", None),
            ("/a/..;p=1/b", None),
            ("/%252e%252e/x", None),
            ("/a/%25252E%25252E/b", None),
            ("/%c0%ae%c0%ae/x", None),
            ("/%C0%AE/x", None),
            ("/%e0%80%ae%e0%80%ae/x", None),
            ("/a%c0%af..%c0%afb", None),
            // Not dot segments, however decoded: kept as they are.
            ("/models/a%252Fb", Some("/models/a%252Fb")),
            ("/a;b/c", Some("/a;b/c")),
            ("/...;/x", Some("/...;/x")),
            ("/%c3%a9", Some("/%c3%a9")),
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
