//! Keeping a proxied request's path inside the upstream's path prefix: a path that holds a dot
//! segment, in any spelling some server would read as one, is refused, never resolved. Used by
//! [`super::proxy`].
//!
//! HTTP clients resolve `.` and `..` before they send a request (RFC 3986 section 5.2.4 is a
//! client-side algorithm; curl, urllib3, the WHATWG URL parser all do it), so a dot segment on the
//! wire was written on purpose, and what it means depends on the decoder behind the proxy:
//! `%2e%2e` is `..` by RFC 3986 section 6.2.2.2, `..%2f` and `..\` are `../` to servers that
//! decode slashes or read backslashes as slashes, `%252e%252e` to one that decodes twice,
//! `%c0%ae` to a lenient UTF-8 decoder, `%u002e` to IIS, `..;x` to Tomcat, `.. ` and `...` to
//! Windows. Resolving one reading and forwarding the result is a guess; refusing is not.

/// The path to append to the upstream's prefix: `path` byte for byte, or `/` for an empty one.
/// `None` (the proxy answers 400) when it is not an origin-form path or holds a dot segment in
/// any spelling (`has_dot_segment`), whether or not it would climb out of the prefix: the path
/// is normalised once (`normalise`) and judged on that.
pub fn confine_path(path: &str) -> Option<String> {
    if path.is_empty() {
        return Some("/".to_owned());
    }
    if !path.starts_with('/') || has_dot_segment(path) {
        return None;
    }
    Some(path.to_owned())
}

/// Whether a segment of `path`, once [`normalise`]d, is made of dots only (`.`, `..`, `...`), a
/// `;` path parameter and trailing blanks, controls and NULs aside (`..;x`, `.. `, `..%00`).
pub fn has_dot_segment(path: &str) -> bool {
    normalise(path.as_bytes()).split(|&b| b == b'/').any(|seg| {
        let seg = seg.split(|&b| b == b';').next().unwrap_or_default();
        let end = seg
            .iter()
            .rposition(|&b| b > b' ' && b != 0x7f)
            .map_or(0, |i| i + 1);
        let seg = &seg[..end];
        !seg.is_empty() && seg.iter().all(|&b| b == b'.')
    })
}

/// `path` as the most lenient decoder behind the proxy could read it: percent escapes (`%XX`
/// and IIS's `%uXXXX`) decoded until nothing changes (at most five rounds), overlong UTF-8
/// forms read as their ASCII character, look-alike dots and slashes (fullwidth, one-dot leader,
/// division slash…) read as `.` and `/`, and backslashes as slashes.
fn normalise(path: &[u8]) -> Vec<u8> {
    let mut bytes = path.to_vec();
    for _ in 0..5 {
        let next = decode_escapes(&bytes);
        if next == bytes {
            break;
        }
        bytes = next;
    }
    let bytes = read_overlong(&bytes);
    let text = String::from_utf8_lossy(&bytes);
    text.chars()
        .map(|c| match c {
            '\\' | '\u{ff0f}' | '\u{ff3c}' | '\u{2215}' | '\u{2044}' | '\u{29f8}' | '\u{fe68}' => {
                '/'
            }
            '\u{ff0e}' | '\u{2024}' | '\u{fe52}' | '\u{3002}' | '\u{ff61}' => '.',
            c => c,
        })
        .collect::<String>()
        .into_bytes()
}

/// Every `%XX` and `%uXXXX` escape decoded once (an invalid one left as it is; a `%uXXXX` that
/// is no character becomes U+FFFD).
fn decode_escapes(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            if let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
            if matches!(bytes.get(i + 1), Some(b'u' | b'U'))
                && let Some(code) = bytes
                    .get(i + 2..i + 6)
                    .filter(|d| d.iter().all(|&b| hex(b).is_some()))
                    .and_then(|d| std::str::from_utf8(d).ok())
                    .and_then(|d| u32::from_str_radix(d, 16).ok())
            {
                let c = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i += 6;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
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

    /// Every spelling of a dot segment: refused, whether it climbs out of the prefix or not.
    const DOT_SPELLINGS: &[&str] = &[
        "/..",
        "/../x",
        "/v1/../admin",
        "/v1/./../admin",
        "/a/./b",
        "/a/.",
        "/a/b/..",
        "/v1/%2e%2e/admin",
        "/v1/%2E%2E/admin",
        "/v1/.%2E/admin",
        "/v1/%2e./admin",
        "/v1/%2e%2e%2fadmin",
        "/v1/..%2Fadmin",
        "/v1/..%5cadmin",
        "/v1/..\\admin",
        "/a\\..\\..\\x",
        "/v1/%5c../admin",
        "/v1/%252e%252e/admin",
        "/a/%25252E%25252E/b",
        "/v1/..%252fadmin",
        "/v1/%c0%ae%c0%ae/admin",
        "/v1/%e0%80%ae%e0%80%ae/admin",
        "/a%c0%af..%c0%afb",
        "/v1/%u002e%u002e/admin",
        "/v1/%U002E%U002E/admin",
        "/v1/%ef%bc%8e%ef%bc%8e/admin",
        "/v1/..%ef%bc%8fadmin",
        "/v1/..;/admin",
        "/v1/..;jsessionid=1/admin",
        "/v1/..%3b/admin",
        "/v1/..%00/admin",
        "/v1/..%20/admin",
        "/v1/..%09/admin",
        "/v1/.../admin",
        "/v1/%2e%2e%2e/admin",
        "//../admin",
        "/v1//../../admin",
    ];

    #[test]
    fn every_spelling_of_a_dot_segment_is_refused() {
        for path in DOT_SPELLINGS {
            assert_eq!(confine_path(path), None, "{path:?}");
        }
        for path in ["*", "x/y", "x/../y"] {
            assert_eq!(confine_path(path), None, "not origin-form: {path:?}");
        }
    }

    #[test]
    fn plain_paths_pass_byte_for_byte() {
        for path in [
            "/v1/chat/completions",
            "/",
            "//double//slash",
            "/models/a%2Fb",
            "/models/a%252Fb",
            "/%41bc",
            "/%2",
            "/%",
            "/%u",
            "/%u00",
            "/é/ü",
            "/%c3%a9",
            "/a;b/c",
            "/v1beta/models/gemini-2.0-flash:streamGenerateContent",
            "/v1/files/file.tar.gz",
            "/v1/.well-known/x",
            "/v1/..x/y",
            "/v1/x../y",
            "/v1/%2e%2ex/y",
        ] {
            assert_eq!(confine_path(path).as_deref(), Some(path), "{path:?}");
        }
        assert_eq!(confine_path("").as_deref(), Some("/"));
    }

    #[test]
    fn a_confined_path_never_climbs_when_parsed_as_a_url() {
        // What confine_path lets through, the URL parser (which resolves dot segments itself)
        // keeps under the prefix, unchanged.
        for tail in ["/models/a%2Fb", "/a/b", "/v1/..x/y", "//x", "/%2e%2ex"] {
            let confined = confine_path(tail).unwrap();
            let url = reqwest::Url::parse(&format!("http://h/api/v1{confined}")).unwrap();
            assert_eq!(url.path(), format!("/api/v1{tail}"), "{tail}");
        }
    }
}
