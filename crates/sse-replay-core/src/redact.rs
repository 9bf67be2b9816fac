//! What counts as a secret, and how it is masked before anything reaches the disk.
//!
//! One place decides it for the recorder, the proxy, the importers and the app: header names
//! ([`is_secret_header`]), URL query keys and `user:password@` ([`redact_url`]), and request bodies
//! ([`redact_body`]: JSON fields at any depth whose key names a secret, and form-urlencoded pairs).
//! Key names are compared as words (`apiKey`, `api_key`, `api-key` and `APIKey` are the same
//! key), so counters such as `max_tokens` or `token_count` stay readable.

/// What secret header values, URL credentials and JSON body values are replaced with.
pub const REDACTED: &str = "‹redacted›";

/// What secret URL query values (and form-body values) are replaced with (ASCII, so the URL or
/// form stays valid).
pub const REDACTED_URL_VALUE: &str = "REDACTED";

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

/// Whether a header carries a credential: any name containing `auth`, `token`, `key`, `secret`,
/// `cookie`, `session` or `password` (case-insensitive), e.g. `Authorization`, `X-Auth`,
/// `X-Api-Token`, `x-goog-api-key`, `Set-Cookie`. Rate-limit counters such as
/// `x-ratelimit-remaining-tokens` are not secrets: a name part ending in `tokens` does not count
/// as a token.
pub fn is_secret_header(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    if [
        "auth", "key", "secret", "cookie", "session", "password", "passwd",
    ]
    .iter()
    .any(|word| name.contains(word))
    {
        return true;
    }
    name.split(['-', '_'])
        .any(|part| part.contains("token") && !part.ends_with("tokens"))
}

/// The words of a key name, lowercased: `apiKey` → `api key`, `APIKey` → `api key`,
/// `client_secret` → `client secret`, `X-Api-Token` → `x api token`.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(i + 1).copied();
        let boundary = c.is_uppercase()
            && !current.is_empty()
            && (prev.is_some_and(char::is_lowercase)
                || prev.is_some_and(|p| p.is_ascii_digit())
                || (prev.is_some_and(char::is_uppercase) && next.is_some_and(char::is_lowercase)));
        if boundary {
            out.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Words that make a key secret wherever they appear in it (`password_hash`, `auth_header`,
/// `sessionId`, `client_secret`).
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "secrets",
    "credential",
    "credentials",
    "authorization",
    "auth",
    "apikey",
    "cookie",
    "cookies",
    "session",
    "sessionid",
    "privatekey",
    "accesstoken",
    "refreshtoken",
    "authtoken",
    "bearer",
];

/// Words that make a key secret only as its last word: `access_token`, `token` — but not
/// `token_count` or `token_type`; `max_tokens` has the word `tokens`, which is never a secret.
const SECRET_LAST_WORDS: &[&str] = &["token", "pass", "pwd", "signature", "sig"];

/// Words that make a following `key` a secret (`api_key`, `privateKey`, `secret-key`); a bare
/// `key` in a JSON body is usually not a credential.
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "private",
    "secret",
    "access",
    "auth",
    "session",
    "signing",
    "client",
    "encryption",
    "subscription",
    "license",
    "master",
];

/// Whether a JSON (or form) body key names a secret: `api_key`, `apiKey`, `api-key`, `token`,
/// `access_token`, `secret`, `client_secret`, `password`, `authorization`, `auth`,
/// `credential(s)`, `private_key`, `session…` — compared as words, case-insensitively, so
/// `max_tokens`, `prompt_tokens` and `token_count` are not secrets.
pub fn is_secret_key(name: &str) -> bool {
    let words = words(name);
    if words.iter().any(|w| SECRET_WORDS.contains(&w.as_str())) {
        return true;
    }
    let Some(last) = words.last() else {
        return false;
    };
    if SECRET_LAST_WORDS.contains(&last.as_str()) {
        return true;
    }
    words.windows(2).any(|pair| {
        pair[1] == "key" && (KEY_QUALIFIERS.contains(&pair[0].as_str()) || pair[0].ends_with("api"))
    })
}

/// Whether a URL query (or form) key names a secret: the body rule ([`is_secret_key`]) plus the
/// names credentials go by in URLs (`key` for Gemini, `sig`, anything ending in `-token`).
fn is_secret_query_param(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "key" | "api_key" | "apikey" | "api-key" | "token" | "access_token" | "auth" | "sig"
    ) || name.contains("secret")
        || name.contains("password")
        || name.ends_with("_token")
        || name.ends_with("-token")
        || is_secret_key(&name)
}

/// How well-known API keys and tokens begin: a value that starts with one of these (then at least
/// [`CREDENTIAL_MIN_TAIL`] more token characters) is a credential wherever it appears — an
/// ordinary header, a URL's path, a user name — whatever the name beside it says.
const CREDENTIAL_PREFIXES: [&str; 26] = [
    "sk-",
    "sk_",
    "rk_",
    "pk_live_",
    "AIza",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "hf_",
    "gsk_",
    "r8_",
    "pplx-",
    "nvapi-",
    "csk-",
    "AKIA",
    "ASIA",
    "ya29.",
    "xai-",
];

/// The least number of token characters after a [`CREDENTIAL_PREFIXES`] prefix.
const CREDENTIAL_MIN_TAIL: usize = 8;

/// Whether `value` is shaped like a well-known credential: an optional auth scheme (`Bearer`),
/// then one token that starts with a known key prefix (`sk-`, `sk-ant-`, `AIza`, `ghp_`, `hf_`,
/// `xoxb-`, `AKIA`, …) and goes on for at least eight token characters. Names alone decide most
/// secrets ([`is_secret_header`], [`is_secret_key`]); this catches a key under an ordinary name.
pub fn looks_like_credential(value: &str) -> bool {
    let v = value.trim();
    let token = match auth_scheme(v) {
        Some(scheme) => v[scheme.len()..].trim(),
        None => v,
    };
    let token_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    !token.contains(char::is_whitespace)
        && token.chars().all(token_char)
        && CREDENTIAL_PREFIXES
            .iter()
            .any(|p| token.starts_with(p) && token.len() >= p.len() + CREDENTIAL_MIN_TAIL)
}

/// Whether `value` only names environment variables (`$OPENAI_API_KEY`, `Bearer ${KEY}`): where
/// a secret will come from, not the secret, so it is kept wherever secrets are redacted.
pub fn is_env_reference(value: &str) -> bool {
    let mut rest = value.trim();
    if let Some(scheme) = auth_scheme(rest) {
        rest = rest[scheme.len()..].trim_start();
    }
    if rest.is_empty() {
        return false;
    }
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    while !rest.is_empty() {
        let Some(after) = rest.strip_prefix('$') else {
            return false;
        };
        let (name, tail) = match after.strip_prefix('{') {
            Some(braced) => match braced.split_once('}') {
                Some((name, tail)) => (name, tail),
                None => return false,
            },
            None => {
                let end = after.find(|c: char| !name_char(c)).unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        if name.is_empty() || !name.chars().all(name_char) {
            return false;
        }
        rest = tail;
    }
    true
}

/// Percent-decodes a URL or form component (`+` is a space), lossily as UTF-8, so `%6Bey` is
/// matched as `key`.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

// ---------------------------------------------------------------------------------------------
// Headers and URLs
// ---------------------------------------------------------------------------------------------

/// Replaces the values of secret headers (see [`is_secret_header`]), and values shaped like a
/// well-known key under any name ([`looks_like_credential`]), with [`REDACTED`], keeping the scheme
/// of an `authorization` value: `Bearer sk-…` becomes `Bearer ‹redacted›`. Empty values and
/// `$VAR` references ([`is_env_reference`]) stay. Idempotent.
pub fn redact_headers(headers: &mut [(String, String)]) {
    for (name, value) in headers.iter_mut() {
        let secret = is_secret_header(name) || looks_like_credential(value);
        if !secret || value.trim().is_empty() || is_env_reference(value) {
            continue;
        }
        let lower = name.trim().to_ascii_lowercase();
        let keeps_scheme = lower == "authorization" || lower == "proxy-authorization";
        *value = match auth_scheme(value) {
            Some(scheme) if keeps_scheme => format!("{scheme} {REDACTED}"),
            _ => REDACTED.to_string(),
        };
    }
}

/// `Bearer` in `Bearer abc`: a short word of letters, digits and dashes followed by credentials.
fn auth_scheme(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim().split_once(char::is_whitespace)?;
    let plausible = !rest.trim().is_empty()
        && scheme.len() <= 32
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-');
    plausible.then_some(scheme)
}

/// `a=1&key=S` with the values of secret keys (decoded before matching) replaced by
/// [`REDACTED_URL_VALUE`]; everything else, including order and encoding, is kept.
fn redact_pairs(pairs: &str, out: &mut String) {
    for (i, pair) in pairs.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((name, value))
                if !value.is_empty()
                    && !is_env_reference(&percent_decode(value))
                    && (is_secret_query_param(percent_decode(name).trim())
                        || looks_like_credential(&percent_decode(value))) =>
            {
                out.push_str(name);
                out.push('=');
                out.push_str(REDACTED_URL_VALUE);
            }
            _ => out.push_str(pair),
        }
    }
}

/// Redacts credentials in a URL: the values of query parameters such as `key` (Gemini),
/// `api_key`, `apikey`, `token`, `access_token` — also percent-encoded (`%6Bey`) — become
/// [`REDACTED_URL_VALUE`], and so do the password of `user:password@`, a user name or a path
/// segment shaped like a well-known key ([`looks_like_credential`]: `https://sk-…@host`,
/// `/v1/sk-…/chat`) and any query value shaped like one. `$VAR` references stay. Everything
/// else, including order and the fragment, is kept.
pub fn redact_url(url: &str) -> String {
    let (before_fragment, fragment) = url.split_at(url.find('#').unwrap_or(url.len()));
    let (base, query) = match before_fragment.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (before_fragment, None),
    };
    let mut out = redact_path(&redact_userinfo(base));
    if let Some(query) = query {
        out.push('?');
        redact_pairs(query, &mut out);
    }
    out.push_str(fragment);
    out
}

/// `https://host/v1/sk-…/chat` → `https://host/v1/REDACTED/chat`: path segments shaped like a
/// well-known key (a gateway that takes the key in the path).
fn redact_path(base: &str) -> String {
    let path_start = match base.find("://") {
        Some(i) => base[i + 3..].find('/').map_or(base.len(), |j| i + 3 + j),
        None => 0,
    };
    let (head, path) = base.split_at(path_start);
    let segments: Vec<&str> = path.split('/').collect();
    if !segments
        .iter()
        .any(|seg| looks_like_credential(&percent_decode(seg)))
    {
        return base.to_owned();
    }
    let redacted: Vec<&str> = segments
        .into_iter()
        .map(|seg| {
            if looks_like_credential(&percent_decode(seg)) {
                REDACTED_URL_VALUE
            } else {
                seg
            }
        })
        .collect();
    format!("{head}{}", redacted.join("/"))
}

/// `https://user:pw@host/p` → `https://user:REDACTED@host/p`; `https://sk-…@host/p` (a key as
/// the user name) → `https://REDACTED@host/p`.
fn redact_userinfo(base: &str) -> String {
    let Some(scheme_end) = base.find("://") else {
        return base.to_string();
    };
    let authority_start = scheme_end + 3;
    let authority_end = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let authority = &base[authority_start..authority_end];
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!(
                "{}{user}:{REDACTED_URL_VALUE}@{host}{}",
                &base[..authority_start],
                &base[authority_end..]
            ),
            None if looks_like_credential(&percent_decode(userinfo)) => format!(
                "{}{REDACTED_URL_VALUE}@{host}{}",
                &base[..authority_start],
                &base[authority_end..]
            ),
            None => base.to_string(),
        },
        None => base.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------

/// The end (exclusive) of the JSON string starting at `start` (a `"`), or `None` when it is cut.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Masks secret fields in JSON text, lexically: every `"key": value` whose key names a secret
/// ([`is_secret_key`], escapes decoded) and whose value is a non-empty string or a number gets
/// `"‹redacted›"`. Objects and arrays are walked whatever their key (a tool schema's `password`
/// property keeps its shape), at any depth without recursion; formatting is kept, and so is a
/// body cut in the middle (a truncated capture) or several JSON documents (JSON lines).
fn redact_json_text(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let Some(end) = string_end(bytes, i) else {
            break;
        };
        let colon = skip_whitespace(bytes, end);
        if bytes.get(colon) != Some(&b':') {
            i = end;
            continue;
        }
        let key = serde_json::from_str::<String>(&text[i..end])
            .unwrap_or_else(|_| text[i + 1..end - 1].to_owned());
        let value_start = skip_whitespace(bytes, colon + 1);
        let value_end = match bytes.get(value_start) {
            Some(b'"') => string_end(bytes, value_start).unwrap_or(bytes.len()),
            Some(b'-' | b'0'..=b'9') => {
                let mut j = value_start + 1;
                while j < bytes.len()
                    && matches!(bytes[j], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
                {
                    j += 1;
                }
                j
            }
            _ => value_start,
        };
        let value = &text[value_start..value_end];
        let masked = format!("\"{REDACTED}\"");
        if value_end > value_start && value != "\"\"" && value != masked && is_secret_key(&key) {
            out.push_str(&text[copied..value_start]);
            out.push_str(&masked);
            copied = value_end;
        }
        i = value_end.max(colon + 1);
    }
    out.push_str(&text[copied..]);
    out
}

/// Whether `body` looks like `a=1&b=2` (form-urlencoded): one line, no spaces, every pair has a
/// `=`, and the first key is a plain name.
fn looks_like_form(body: &str) -> bool {
    let body = body.trim();
    !body.is_empty()
        && !body.contains([' ', '\n', '\r', '\t', '{', '[', '"'])
        && body.split('&').all(|pair| {
            pair.split_once('=')
                .is_some_and(|(k, _)| !k.is_empty() && !k.contains('='))
        })
}

/// The request body with its secrets masked: a JSON body's secret fields at any depth (see
/// [`is_secret_key`]; values become `"‹redacted›"`, formatting kept), a form-urlencoded body's
/// secret pairs (keys decoded before matching, values become [`REDACTED_URL_VALUE`]). Other
/// bodies are kept. A body without secrets is returned byte for byte. Idempotent.
pub fn redact_body(body: &str) -> String {
    let trimmed = body.trim_start_matches('\u{feff}').trim();
    if trimmed.starts_with(['{', '[']) {
        return redact_json_text(body);
    }
    if looks_like_form(trimmed) {
        let mut out = String::with_capacity(body.len());
        redact_pairs(trimmed, &mut out);
        if out != trimmed {
            return out;
        }
    }
    body.to_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_under_ordinary_names_and_in_url_paths_and_user_names() {
        for v in [
            "sk-proj-abcdefgh1234",
            "Bearer sk-ant-api03-abcdefgh",
            "AIzaSyA-1234567890abcdef",
            "ghp_0123456789abcdef",
            "hf_abcdefghijkl",
            "xoxb-1234-5678-abcdef",
        ] {
            assert!(looks_like_credential(v), "{v}");
        }
        for v in [
            "sk-",
            "sk-short",
            "application/json",
            "gpt-4o-mini",
            "skip-this-one-please",
            "Bearer $OPENAI_API_KEY",
            "2023-06-01",
        ] {
            assert!(!looks_like_credential(v), "{v}");
        }
        let mut h = vec![
            ("X-Custom".to_owned(), "sk-live-abcdefgh99".to_owned()),
            ("X-Request-Id".to_owned(), "req_0123456789".to_owned()),
            (
                "Authorization".to_owned(),
                "Bearer $OPENAI_API_KEY".to_owned(),
            ),
        ];
        redact_headers(&mut h);
        assert_eq!(h[0].1, REDACTED);
        assert_eq!(h[1].1, "req_0123456789");
        assert_eq!(
            h[2].1, "Bearer $OPENAI_API_KEY",
            "a reference is not the secret"
        );
        assert_eq!(
            redact_url("https://gw.example/v1/sk-proj-abcdefgh12/chat?x=1"),
            "https://gw.example/v1/REDACTED/chat?x=1"
        );
        assert_eq!(
            redact_url("https://ghp_0123456789abcdef@github.com/o/r"),
            "https://REDACTED@github.com/o/r"
        );
        assert_eq!(redact_url("https://me@host/p"), "https://me@host/p");
        assert_eq!(
            redact_url(
                "https://h/v1beta/models/gemini-2.0-flash:streamGenerateContent?key=$GEMINI_API_KEY&alt=sse"
            ),
            "https://h/v1beta/models/gemini-2.0-flash:streamGenerateContent?key=$GEMINI_API_KEY&alt=sse"
        );
        assert_eq!(
            redact_url("https://h/p?q=sk-ant-abcdefgh12"),
            "https://h/p?q=REDACTED"
        );
        // Idempotent.
        let once = redact_url("https://u:pw@h/sk-abcdefgh123/x?key=k");
        assert_eq!(redact_url(&once), once);
        assert!(is_env_reference("${A_B}$C"));
        assert!(is_env_reference("Bearer $KEY"));
        assert!(!is_env_reference("$"));
        assert!(!is_env_reference("x$KEY"));
        assert!(!is_env_reference("Bearer"));
    }

    #[test]
    fn secret_headers() {
        for name in [
            "Authorization",
            "proxy-authorization",
            "API-Key",
            "x-api-key",
            "X-Goog-Api-Key",
            "openai-api-key",
            "anthropic-api-key",
            "Cookie",
            "set-cookie",
            "x-apikey",
            "x-auth-token",
            "X-Amz-Security-Token",
            "x-client-secret",
            "my_api_key",
            "X-Auth",
            "X-Api-Token",
            "X-Session-Id",
            "X-Custom-Key",
            "x-token",
        ] {
            assert!(is_secret_header(name), "{name}");
        }
        for name in [
            "content-type",
            "x-ratelimit-remaining-tokens",
            "anthropic-ratelimit-input-tokens-remaining",
            "anthropic-version",
            "openai-organization",
            "user-agent",
            "accept",
        ] {
            assert!(!is_secret_header(name), "{name}");
        }
    }

    #[test]
    fn secret_keys_are_words_not_substrings() {
        for name in [
            "api_key",
            "apiKey",
            "api-key",
            "APIKey",
            "ApiKey",
            "apikey",
            "x-api-key",
            "token",
            "access_token",
            "accessToken",
            "refresh_token",
            "id_token",
            "secret",
            "client_secret",
            "clientSecret",
            "password",
            "PASSWORD",
            "passwd",
            "authorization",
            "Authorization",
            "auth",
            "credential",
            "credentials",
            "private_key",
            "privateKey",
            "session",
            "session_id",
            "sessionToken",
            "secret_access_key",
            "aws_secret_access_key",
            "openai_api_key",
        ] {
            assert!(is_secret_key(name), "{name}");
        }
        for name in [
            "max_tokens",
            "maxTokens",
            "tokens",
            "prompt_tokens",
            "completion_tokens",
            "token_count",
            "max_output_tokens",
            "key",
            "model",
            "author",
            "keywords",
            "messages",
            "tool_choice",
            "monkey",
            "turkey_count",
            "",
        ] {
            assert!(!is_secret_key(name), "{name}");
        }
    }

    #[test]
    fn word_splitting() {
        assert_eq!(words("apiKey"), ["api", "key"]);
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(words("client_secret"), ["client", "secret"]);
        assert_eq!(words("X-Api-Token"), ["x", "api", "token"]);
        assert_eq!(words("max_tokens"), ["max", "tokens"]);
        assert_eq!(words("v2Token"), ["v2", "token"]);
    }

    #[test]
    fn header_redaction_keeps_the_scheme() {
        let mut headers: Vec<(String, String)> = [
            ("Authorization", "Bearer sk-proj-abc123"),
            ("proxy-authorization", "Basic dXNlcjpwYXNz"),
            ("authorization", "sk-raw-key"),
            ("x-api-key", "sk-ant-api03 with space"),
            ("cookie", "session=abc; other=def"),
            ("content-type", "application/json"),
            ("x-goog-api-key", ""),
            ("X-Auth", "abc"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        redact_headers(&mut headers);
        let values: Vec<&str> = headers.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(
            values,
            [
                "Bearer ‹redacted›",
                "Basic ‹redacted›",
                "‹redacted›",
                "‹redacted›",
                "‹redacted›",
                "application/json",
                "",
                "‹redacted›",
            ]
        );
        let before = headers.clone();
        redact_headers(&mut headers);
        assert_eq!(headers, before, "idempotent");
    }

    #[test]
    fn url_redaction() {
        assert_eq!(
            redact_url(
                "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse&key=AIzaSyXXX"
            ),
            "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse&key=REDACTED"
        );
        assert_eq!(
            redact_url("http://h/p?API_KEY=1&apikey=2&token=3&access_token=4&keep=5#frag"),
            "http://h/p?API_KEY=REDACTED&apikey=REDACTED&token=REDACTED&access_token=REDACTED&keep=5#frag"
        );
        assert_eq!(redact_url("https://h/p"), "https://h/p");
        assert_eq!(redact_url("https://h/p?key=&flag"), "https://h/p?key=&flag");
        assert_eq!(
            redact_url("https://user:pw@h:8080/p?q=1"),
            "https://user:REDACTED@h:8080/p?q=1"
        );
        assert_eq!(redact_url("not a url ? key=x"), "not a url ? key=REDACTED");
        // Percent-encoded and `+`-encoded keys are decoded before matching.
        assert_eq!(
            redact_url("https://h/p?%6Bey=S1&api%5Fkey=S2&client+secret=S3&max_tokens=5&%zz=1%"),
            "https://h/p?%6Bey=REDACTED&api%5Fkey=REDACTED&client+secret=REDACTED&max_tokens=5&%zz=1%"
        );
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("%6Bey"), "key");
        assert_eq!(percent_decode("a+b%20c"), "a b c");
        assert_eq!(percent_decode("%"), "%");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("%zz"), "%zz");
        assert_eq!(percent_decode("%E6%B7%B1"), "深");
    }

    #[test]
    fn json_bodies() {
        let body = r#"{"model":"m","max_tokens":5,"api_key":"S1","nested":{"list":[{"clientSecret":"S2","token_count":3}]},"auth":{"password":"S3","user":"u"},"tools":[{"parameters":{"properties":{"password":{"type":"string"}}}}],"n":{"accessToken":12345},"\u0074oken":"S4","msg":"a \"token\": \"x\""}"#;
        let out = redact_body(body);
        for secret in ["S1", "S2", "S3", "S4", "12345"] {
            assert!(!out.contains(secret), "{secret} in {out}");
        }
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["max_tokens"], 5);
        assert_eq!(v["nested"]["list"][0]["token_count"], 3);
        assert_eq!(v["auth"]["user"], "u");
        assert_eq!(
            v["tools"][0]["parameters"]["properties"]["password"]["type"],
            "string"
        );
        assert_eq!(v["api_key"], REDACTED);
        assert_eq!(
            v["msg"], "a \"token\": \"x\"",
            "text inside a string is not a key"
        );
        // No secret: the body is kept byte for byte (formatting included).
        let plain = "{ \"model\": \"m\",\n  \"max_tokens\": 5 }";
        assert_eq!(redact_body(plain), plain);
        // Formatting is kept around a masked value.
        assert_eq!(
            redact_body("{\n  \"password\" : \"p w\",\n  \"x\": 1\n}"),
            "{\n  \"password\" : \"‹redacted›\",\n  \"x\": 1\n}"
        );
        // Idempotent.
        assert_eq!(redact_body(&out), out);
    }

    #[test]
    fn cut_and_multi_document_json() {
        // A truncated capture still loses its secrets.
        let cut = redact_body("{\"api_key\":\"S1\",\"messages\":[{\"content\":\"hi");
        assert!(!cut.contains("S1"), "{cut}");
        assert!(cut.ends_with("\"hi"), "{cut}");
        let cut_value = redact_body("{\"token\":\"S1-cut");
        assert!(!cut_value.contains("S1"), "{cut_value}");
        let lines = redact_body("{\"token\":\"S1\"}\n{\"a\":1}\n");
        assert_eq!(lines, "{\"token\":\"‹redacted›\"}\n{\"a\":1}\n");
    }

    #[test]
    fn every_cut_of_a_body_hides_a_complete_secret() {
        let body = "{\"messages\":[{\"role\":\"user\",\"content\":\"深圳 \\\"q\\\"\"}],\n \"api_key\" : \"sk-LEAK-1\", \"auth\":{\"token\":\"tk-LEAK-2\"},\"max_tokens\":7}";
        for (cut, _) in body.char_indices().chain([(body.len(), ' ')]) {
            let prefix = &body[..cut];
            let out = redact_body(prefix);
            for secret in ["sk-LEAK-1", "tk-LEAK-2"] {
                assert!(!out.contains(secret), "cut {cut}: {out}");
            }
            assert_eq!(redact_body(&out), out, "idempotent at cut {cut}");
        }
    }

    #[test]
    fn other_bodies() {
        assert_eq!(
            redact_body("grant_type=x&client_secret=S1&password=S2&%61pi_key=S3&scope=a+b"),
            "grant_type=x&client_secret=REDACTED&password=REDACTED&%61pi_key=REDACTED&scope=a+b"
        );
        assert_eq!(
            redact_body("just some text = here"),
            "just some text = here"
        );
        assert_eq!(redact_body(""), "");
        assert_eq!(redact_body("{\"a\":"), "{\"a\":");
    }

    #[test]
    fn deep_json_does_not_overflow() {
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(redact_body(&deep), deep);
    }
}
