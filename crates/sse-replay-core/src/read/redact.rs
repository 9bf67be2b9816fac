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
/// `cookie`, `session`, `password`, `jwt`, `credential`, `signature` or `assertion`
/// (case-insensitive), e.g. `Authorization`, `X-Auth`,
/// `X-Api-Token`, `x-goog-api-key`, `Set-Cookie`. Rate-limit counters such as
/// `x-ratelimit-remaining-tokens` are not secrets: a name part ending in `tokens` does not count
/// as a token.
pub fn is_secret_header(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    if [
        "auth",
        "key",
        "secret",
        "cookie",
        "session",
        "password",
        "passwd",
        "jwt",
        "credential",
        "signature",
        "assertion",
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
    "jwt",
    "jwts",
    "passcode",
];

/// Words that make a key secret only as its last word: `access_token`, `token` — but not
/// `token_count` or `token_type`; `max_tokens` has the word `tokens`, which is never a secret.
const SECRET_LAST_WORDS: &[&str] = &[
    "token",
    "pass",
    "pwd",
    "signature",
    "sig",
    "assertion",
    "otp",
    "pin",
];

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
        // `jsessionid`, `PHPSESSID`, `session_token`: a session is a credential in a URL.
        || name.contains("session")
        || name.contains("sessid")
        || name.ends_with("_token")
        || name.ends_with("-token")
        || is_secret_key(&name)
}

/// How well-known API keys and tokens begin: a value that starts with one of these (then at least
/// [`CREDENTIAL_MIN_TAIL`] more token characters) is a credential wherever it appears — an
/// ordinary header, a URL's path, a user name — whatever the name beside it says. AWS access key
/// ids and JWTs have shapes of their own ([`is_aws_key_id`], [`is_jwt`]).
const CREDENTIAL_PREFIXES: [&str; 30] = [
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
    "ya29.",
    "xai-",
    "npm_",
    "pypi-",
    "SG.",
    "dop_v1_",
    "shpat_",
    "lin_api_",
];

/// The least number of token characters after a [`CREDENTIAL_PREFIXES`] prefix.
const CREDENTIAL_MIN_TAIL: usize = 8;

/// The least number of token characters after a prefix for a key found *inside* a longer text
/// (a sentence, a header value with other words): there, only a long, random-looking tail counts
/// ([`is_credential_token`]), so prose such as `sk-learn-compatible` stays.
const EMBEDDED_MIN_TAIL: usize = 16;

/// The characters a key or token is made of.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// An AWS access key id: `AKIA` (long-term) or `ASIA` (temporary) and exactly 16 upper-case
/// letters and digits — not `ASIA-PACIFIC`.
fn is_aws_key_id(token: &str) -> bool {
    token.len() == 20
        && (token.starts_with("AKIA") || token.starts_with("ASIA"))
        && token[4..]
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// A JSON Web Token: `eyJ…​.eyJ…​` and an optional `.signature`, each part base64url (`eyJ` is how
/// `{"` begins in base64, so both the header and the payload start with it).
fn is_jwt(token: &str) -> bool {
    let b64 = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let mut parts = token.split('.');
    let (Some(header), Some(payload)) = (parts.next(), parts.next()) else {
        return false;
    };
    let signature = parts.next();
    parts.next().is_none()
        && header.len() >= 10
        && payload.len() >= 6
        && header.starts_with("eyJ")
        && payload.starts_with("eyJ")
        && b64(header)
        && b64(payload)
        && signature.is_none_or(b64)
}

/// Whether `token` (token characters only) is shaped like a well-known key found inside a longer
/// text: a JWT, an AWS access key id, or a `CREDENTIAL_PREFIXES` prefix followed by at least
/// `EMBEDDED_MIN_TAIL` characters that look random (a digit, or both cases). Stricter than
/// [`looks_like_credential`], which judges a whole value.
pub fn is_credential_token(token: &str) -> bool {
    is_jwt(token) || is_aws_key_id(token) || has_key_prefix(token, EMBEDDED_MIN_TAIL)
}

/// A [`CREDENTIAL_PREFIXES`] prefix, then at least `min_tail` token characters that look
/// random: a digit among them, or both cases (`sk-proj-Ab3…`, not `sk-learn-compatible`).
fn has_key_prefix(token: &str, min_tail: usize) -> bool {
    CREDENTIAL_PREFIXES.iter().any(|p| {
        token.strip_prefix(p).is_some_and(|tail| {
            tail.len() >= min_tail
                && tail.chars().all(is_token_char)
                && (tail.bytes().any(|b| b.is_ascii_digit())
                    || (tail.bytes().any(|b| b.is_ascii_uppercase())
                        && tail.bytes().any(|b| b.is_ascii_lowercase())))
        })
    })
}

/// How a PEM private key block begins and ends (`-----BEGIN PRIVATE KEY-----`, `-----BEGIN RSA
/// PRIVATE KEY-----`, `-----BEGIN OPENSSH PRIVATE KEY-----`, …): the label between the dashes
/// ends in `PRIVATE KEY`.
const PEM_BEGIN: &str = "-----BEGIN ";
const PEM_END: &str = "-----END ";
const PEM_LABEL_END: &str = "PRIVATE KEY-----";

/// Byte ranges of the PEM private key blocks in `text`: from `-----BEGIN …PRIVATE KEY-----` to
/// the end of its `-----END …PRIVATE KEY-----` line, or to the end of the text when it is cut.
/// A service account's JSON key or a signing key pasted into a request is a secret whatever
/// field holds it; its base64 lines have no shape of their own.
fn private_key_blocks(text: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(begin) = text[from..].find(PEM_BEGIN).map(|i| from + i) {
        let label = begin + PEM_BEGIN.len();
        // The label is short and on the BEGIN line: `RSA PRIVATE KEY-----`.
        let line_end = text[label..]
            .find(['\n', '\\'])
            .map_or(text.len(), |i| label + i);
        let Some(label_end) = text[label..line_end]
            .find(PEM_LABEL_END)
            .map(|i| label + i + PEM_LABEL_END.len())
        else {
            from = label;
            continue;
        };
        let end = text[label_end..]
            .find(PEM_END)
            .and_then(|i| {
                let end_label = label_end + i + PEM_END.len();
                text[end_label..]
                    .find(PEM_LABEL_END)
                    .map(|j| end_label + j + PEM_LABEL_END.len())
            })
            .unwrap_or(text.len());
        found.push((begin, end));
        from = end;
    }
    found
}

/// Where the keys embedded in `text` are ([`is_credential_token`]): byte ranges of maximal runs
/// of token characters (a trailing `.` ends a sentence, not the key), and of PEM private key
/// blocks ([`private_key_blocks`]), in text order. With `json_escapes`, a backslash and the
/// character after it (`\n`, `\u0041`) separate runs, as in a JSON string's raw text.
fn credential_tokens(text: &str, json_escapes: bool) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut from = 0;
    let blocks = private_key_blocks(text);
    for (start, end) in blocks
        .into_iter()
        .chain(std::iter::once((text.len(), text.len())))
    {
        key_tokens(&text[from..start], json_escapes, from, &mut found);
        if end > start {
            found.push((start, end));
        }
        from = end;
    }
    found
}

/// The keys among the runs of token characters of `text` (see [`credential_tokens`]), pushed to
/// `found` as ranges shifted by `offset`.
fn key_tokens(text: &str, json_escapes: bool, offset: usize, found: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if json_escapes && bytes[i] == b'\\' {
            i += if bytes.get(i + 1) == Some(&b'u') {
                6
            } else {
                2
            };
            continue;
        }
        if !is_token_char(bytes[i] as char) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_token_char(bytes[i] as char) {
            i += 1;
        }
        let token = text[start..i].trim_end_matches('.');
        if is_credential_token(token) {
            found.push((offset + start, offset + start + token.len()));
            continue;
        }
        // `… Bearer q8Zr…` in prose or a pasted command: the credential after the scheme goes,
        // the scheme stays. Its token68 may hold `+`, `/` and `=` (`Basic dXNl…==`).
        let spaces = bytes[i..].iter().take_while(|&&b| b == b' ').count();
        if spaces > 0 && CREDENTIAL_SCHEMES.contains(&token.to_ascii_lowercase().as_str()) {
            let cred = i + spaces;
            let cred_end = cred
                + bytes[cred..]
                    .iter()
                    .take_while(|&&b| {
                        b.is_ascii_alphanumeric()
                            || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
                    })
                    .count();
            let cred_text = text[cred..cred_end].trim_end_matches('.');
            if is_scheme_credential(&format!("{token} {cred_text}")) {
                found.push((offset + cred, offset + cred + cred_text.len()));
                i = cred + cred_text.len();
            }
        }
    }
}

/// `text` with every embedded key ([`credential_tokens`]) replaced by `with`; `None` when it
/// has none.
fn mask_credential_tokens(text: &str, with: &str) -> Option<String> {
    let found = credential_tokens(text, false);
    if found.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end) in found {
        out.push_str(&text[copied..start]);
        out.push_str(with);
        copied = end;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Whether `value` is shaped like a well-known credential: an optional auth scheme (`Bearer`),
/// then one token that starts with a known key prefix (`sk-`, `sk-ant-`, `AIza`, `ghp_`, `hf_`,
/// `xoxb-`, …) and goes on for at least eight token characters that look random (a digit, or
/// both cases: not `sk-learn-compatible`), or is an AWS access key id
/// (`AKIA…`, `ASIA…`) or a JWT (`eyJ….eyJ….…`). Names alone decide most secrets
/// ([`is_secret_header`], [`is_secret_key`]); this catches a key under an ordinary name.
pub fn looks_like_credential(value: &str) -> bool {
    let v = value.trim();
    let token = match auth_scheme(v) {
        Some(scheme) => v[scheme.len()..].trim(),
        None => v,
    };
    if is_scheme_credential(v) {
        return true;
    }
    if !token.chars().all(is_token_char) {
        return false;
    }
    is_jwt(token) || is_aws_key_id(token) || has_key_prefix(token, CREDENTIAL_MIN_TAIL)
}

/// The `Authorization` schemes whose one parameter is the credential itself (`Bearer`, `Basic`,
/// `Token`, `ApiKey`), compared case-insensitively.
const CREDENTIAL_SCHEMES: [&str; 4] = ["bearer", "basic", "token", "apikey"];

/// Whether `value` is an `Authorization`-style credential wherever it appears (`X-Upstream-Auth`
/// would be caught by its name, `X-Forward: Bearer …` or `"note": "Basic Zm9v…"` only by this):
/// one of [`CREDENTIAL_SCHEMES`], then a single token68 (RFC 9110: letters, digits, `-._~+/`, then
/// `=` padding) of at least [`CREDENTIAL_MIN_TAIL`] characters that looks random (a digit, or
/// both cases), so prose such as `Bearer authentication` stays.
fn is_scheme_credential(value: &str) -> bool {
    let Some(scheme) = auth_scheme(value) else {
        return false;
    };
    let token = value.trim()[scheme.len()..].trim();
    let body = token.trim_end_matches('=');
    CREDENTIAL_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str())
        && body.len() >= CREDENTIAL_MIN_TAIL
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '+' | '/'))
        && (body.bytes().any(|b| b.is_ascii_digit())
            || (body.bytes().any(|b| b.is_ascii_uppercase())
                && body.bytes().any(|b| b.is_ascii_lowercase())))
}

/// Whether `value` holds a credential: it is one ([`looks_like_credential`]) or has one inside
/// (`token=sk-…; other`, a sentence with a key in it: [`is_credential_token`]).
pub fn contains_credential(value: &str) -> bool {
    looks_like_credential(value) || !credential_tokens(value, false).is_empty()
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

/// Replaces the values of secret headers (see [`is_secret_header`]), and values holding a
/// well-known key under any name ([`contains_credential`]), with [`REDACTED`], keeping the scheme
/// of an `authorization` value: `Bearer sk-…` becomes `Bearer ‹redacted›`. Empty values and
/// `$VAR` references ([`is_env_reference`]) stay. Idempotent.
pub fn redact_headers(headers: &mut [(String, String)]) {
    for (name, value) in headers.iter_mut() {
        let secret = is_secret_header(name) || contains_credential(value);
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
    redact_pairs_split(pairs, '&', out);
}

/// [`redact_pairs`] with pairs separated by `separator` (`;` for a path segment's matrix
/// parameters: `/app;jsessionid=…`).
fn redact_pairs_split(pairs: &str, separator: char, out: &mut String) {
    for (i, pair) in pairs.split(separator).enumerate() {
        if i > 0 {
            out.push(separator);
        }
        match pair.split_once('=') {
            Some((name, value))
                if !value.is_empty()
                    && !is_env_reference(&percent_decode(value))
                    && (is_secret_query_param(percent_decode(name).trim())
                        || contains_credential(&percent_decode(value))) =>
            {
                out.push_str(name);
                out.push('=');
                out.push_str(REDACTED_URL_VALUE);
            }
            // `?sk-…`: a key with no name.
            None if contains_credential(&percent_decode(pair)) => out.push_str(REDACTED_URL_VALUE),
            _ => out.push_str(pair),
        }
    }
}

/// Redacts credentials in a URL: the values of query parameters such as `key` (Gemini),
/// `api_key`, `apikey`, `token`, `access_token` — also percent-encoded (`%6Bey`) — become
/// [`REDACTED_URL_VALUE`], and so do the password of `user:password@`, a userinfo with no colon
/// (`https://TOKEN@host`: a token in the user's place) and the secret pairs of the fragment
/// (`#access_token=…`, as OAuth's implicit flow returns it), a path segment shaped like a
/// well-known key ([`looks_like_credential`]: `/v1/sk-…/chat`) and any query value shaped like
/// one. `$VAR` references stay. Everything else, including order, is kept. A path alone
/// (`/v1/keys/sk-…/usage`, as a server logs it) is redacted the same way.
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
    if let Some(fragment) = fragment.strip_prefix('#') {
        out.push('#');
        redact_pairs(fragment, &mut out);
    }
    out
}

/// `https://host/v1/sk-…/chat` → `https://host/v1/REDACTED/chat`: path segments shaped like a
/// well-known key (a gateway that takes the key in the path), and keys inside a segment. Also
/// for a path alone (`/v1/keys/sk-…/usage`), as servers log it.
fn redact_path(base: &str) -> String {
    let path_start = match base.find("://") {
        Some(i) => base[i + 3..].find('/').map_or(base.len(), |j| i + 3 + j),
        None => 0,
    };
    let (head, path) = base.split_at(path_start);
    let segments: Vec<&str> = path.split('/').collect();
    // `/app;jsessionid=…`: a segment's matrix parameters, read as a query's pairs.
    let matrix = |seg: &str| -> Option<String> {
        let (name, params) = seg.split_once(';')?;
        let mut out = format!("{name};");
        redact_pairs_split(params, ';', &mut out);
        (out != seg).then_some(out)
    };
    if !segments
        .iter()
        .any(|seg| contains_credential(&percent_decode(seg)) || matrix(seg).is_some())
    {
        return base.to_owned();
    }
    let redacted: Vec<String> = segments
        .into_iter()
        .map(|seg| {
            let decoded = percent_decode(seg);
            if let Some(masked) = matrix(seg).filter(|m| !contains_credential(&percent_decode(m))) {
                masked
            } else if looks_like_credential(&decoded) {
                REDACTED_URL_VALUE.to_owned()
            } else if contains_credential(&decoded) {
                // A key inside a segment (`models/m:sk-…`): the key goes, the rest stays.
                mask_credential_tokens(seg, REDACTED_URL_VALUE)
                    .filter(|masked| !contains_credential(&percent_decode(masked)))
                    .unwrap_or_else(|| REDACTED_URL_VALUE.to_owned())
            } else {
                seg.to_owned()
            }
        })
        .collect();
    format!("{head}{}", redacted.join("/"))
}

/// `https://user:pw@host/p` → `https://user:REDACTED@host/p`; `https://TOKEN@host/p` (a token
/// in the user's place, `sk-…` or any other) → `https://REDACTED@host/p`.
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
            None if userinfo.is_empty() || userinfo == REDACTED_URL_VALUE => base.to_string(),
            None => format!(
                "{}{REDACTED_URL_VALUE}@{host}{}",
                &base[..authority_start],
                &base[authority_end..]
            ),
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

/// The masked form of a header's value: `‹redacted›`, keeping the scheme of an authorization
/// value (`Bearer ‹redacted›`), as [`redact_headers`] masks it.
fn masked_header_value(name: &str, value: &str) -> String {
    let mut one = [(name.to_owned(), value.to_owned())];
    redact_headers(&mut one);
    let [(_, masked)] = one;
    masked
}

/// The masked form of the value of a metadata pair whose name field says `name` (a secret
/// header's or key's): as a header's ([`masked_header_value`]) when `name` is a secret header,
/// `‹redacted›` otherwise (`{"key": "otp", "value": 123}`); a `$VAR` reference stays.
fn masked_pair_value(name: &str, value: &str) -> String {
    if is_secret_header(name) {
        masked_header_value(name, value)
    } else if is_env_reference(value) {
        value.to_owned()
    } else {
        REDACTED.to_owned()
    }
}

/// The end (exclusive) of the JSON scalar (string or number) at `start`, or `start` when there
/// is none there (an object, an array, a literal).
fn scalar_end(bytes: &[u8], start: usize) -> usize {
    match bytes.get(start) {
        Some(b'"') => string_end(bytes, start).unwrap_or(bytes.len()),
        Some(b'-' | b'0'..=b'9') => {
            let mut j = start + 1;
            while j < bytes.len()
                && matches!(bytes[j], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
            {
                j += 1;
            }
            j
        }
        _ => start,
    }
}

/// The end (exclusive) of the array or object opening at `start`, strings skipped; the end of
/// the text when it is cut.
fn container_end(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i).unwrap_or(bytes.len());
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// A JSON string literal's text, escapes decoded (the raw text between the quotes when it does
/// not decode).
fn json_string(literal: &str) -> String {
    serde_json::from_str::<String>(literal).unwrap_or_else(|_| {
        literal
            .trim_start_matches('"')
            .trim_end_matches('"')
            .to_owned()
    })
}

/// The fields that name the `"value"` beside them in a metadata pair: `{"name": "Authorization",
/// "value": "Bearer …"}` (HAR, many SDKs), `{"key": "x-api-key", "value": "…"}` (Postman,
/// OpenAPI examples, key/value metadata lists), `{"header": …, "value": …}`.
const PAIR_NAME_FIELDS: [&str; 4] = ["name", "key", "header", "field"];

/// One object being walked by [`redact_json_text`]: whether a name field
/// ([`PAIR_NAME_FIELDS`]) naming a secret header was seen (`{"name": "Authorization", "value":
/// "Bearer …"}`), and where its `"value"` (a string or a number) is when that came first.
#[derive(Default)]
struct Frame {
    object: bool,
    secret_name: Option<String>,
    value: Option<(usize, usize)>,
}

/// Masks secret fields in JSON text, lexically: every `"key": value` whose key names a secret
/// ([`is_secret_key`], escapes decoded) and whose value is a non-empty string or a number gets
/// `"‹redacted›"`, and so does every string and number in an array under such a key
/// (`"secrets": ["…"]`). Header pairs are recognised too: `["Authorization", "Bearer …"]`,
/// `{"name": "X-Api-Key", "value": "…"}` and `{"key": "Authorization", "value": "…"}` have
/// their value masked as a header's ([`is_secret_header`]). Any other string is masked by its
/// shape: whole when it is a key ([`looks_like_credential`]: `"note": "sk-…"`, an `AKIA…` id,
/// a JWT), or the keys inside it ([`is_credential_token`]). Objects are walked whatever their key (a tool schema's `password`
/// property keeps its shape), at any depth without recursion; formatting is kept, and so is a
/// body cut in the middle (a truncated capture) or several JSON documents (JSON lines).
fn redact_json_text(text: &str) -> String {
    let bytes = text.as_bytes();
    let masked_value = format!("\"{REDACTED}\"");
    // (start, end, replacement), in text order.
    let mut masks: Vec<(usize, usize, String)> = Vec::new();
    let mask = |start: usize, end: usize, with: String, masks: &mut Vec<_>| {
        let value = &text[start..end];
        if end > start && value != "\"\"" && !value.contains(REDACTED) {
            masks.push((start, end, with));
        }
    };
    // A string that is not under a secret key: masked whole when it is a key
    // ([`looks_like_credential`]), or the keys inside it ([`is_credential_token`]).
    let by_shape = |start: usize, end: usize, masks: &mut Vec<(usize, usize, String)>| {
        let literal = &text[start..end];
        if looks_like_credential(&json_string(literal)) {
            mask(start, end, masked_value.clone(), masks);
            return;
        }
        for (s, e) in credential_tokens(literal, true) {
            masks.push((start + s, start + e, REDACTED.to_owned()));
        }
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                stack.push(Frame {
                    object: true,
                    ..Frame::default()
                });
                i += 1;
                continue;
            }
            b'[' => {
                // `[["Authorization", "Bearer …"], …]`: headers as a list of pairs (only in a
                // list, and only pairs, so `"required": ["api_key", "city"]` stays as it is).
                let in_list = stack.last().is_some_and(|f| !f.object);
                stack.push(Frame::default());
                let first = skip_whitespace(bytes, i + 1);
                if in_list
                    && bytes.get(first) == Some(&b'"')
                    && let Some(first_end) = string_end(bytes, first)
                {
                    let comma = skip_whitespace(bytes, first_end);
                    let second = skip_whitespace(bytes, comma + 1);
                    let second_end = scalar_end(bytes, second);
                    let closed = bytes.get(skip_whitespace(bytes, second_end)) == Some(&b']');
                    let name = json_string(&text[first..first_end]);
                    if bytes.get(comma) == Some(&b',')
                        && bytes.get(second) == Some(&b'"')
                        && (closed || second_end == bytes.len())
                        && is_secret_header(&name)
                    {
                        let value = json_string(&text[second..second_end]);
                        let with = serde_json::to_string(&masked_header_value(&name, &value))
                            .unwrap_or_else(|_| masked_value.clone());
                        mask(second, second_end, with, &mut masks);
                        i = second_end;
                        continue;
                    }
                }
                i += 1;
                continue;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
                continue;
            }
            b'"' => {}
            _ => {
                i += 1;
                continue;
            }
        }
        let Some(end) = string_end(bytes, i) else {
            // A body cut inside its last string (a truncated capture): a whole key there goes too.
            by_shape(i, bytes.len(), &mut masks);
            break;
        };
        let colon = skip_whitespace(bytes, end);
        if bytes.get(colon) != Some(&b':') {
            by_shape(i, end, &mut masks);
            i = end;
            continue;
        }
        let key = json_string(&text[i..end]);
        let value_start = skip_whitespace(bytes, colon + 1);
        let value_end = scalar_end(bytes, value_start);
        if is_secret_key(&key) {
            if bytes.get(value_start) == Some(&b'[') {
                // Every scalar in the array (object keys inside it excepted).
                let array_end = container_end(bytes, value_start);
                let mut j = value_start + 1;
                while j < array_end {
                    let scalar = scalar_end(bytes, j);
                    if scalar > j {
                        let is_key = bytes.get(skip_whitespace(bytes, scalar)) == Some(&b':');
                        if !is_key {
                            mask(j, scalar, masked_value.clone(), &mut masks);
                        }
                        j = scalar;
                    } else {
                        j += 1;
                    }
                }
                i = array_end;
                continue;
            }
            mask(value_start, value_end, masked_value.clone(), &mut masks);
        } else if bytes.get(value_start) == Some(&b'"') {
            by_shape(value_start, value_end, &mut masks);
        }
        // `{"name": "Authorization", "value": "…"}` and `{"key": "x-api-key", "value": 1234}`,
        // in either order.
        let is_string = bytes.get(value_start) == Some(&b'"');
        if (is_string || value_end > value_start)
            && let Some(frame) = stack.last_mut().filter(|f| f.object)
        {
            if is_string && PAIR_NAME_FIELDS.iter().any(|f| key.eq_ignore_ascii_case(f)) {
                let name = json_string(&text[value_start..value_end]);
                if is_secret_header(&name) || is_secret_key(&name) {
                    if let Some((s, e)) = frame.value.take() {
                        let value = json_string(&text[s..e]);
                        let with = serde_json::to_string(&masked_pair_value(&name, &value))
                            .unwrap_or_else(|_| masked_value.clone());
                        mask(s, e, with, &mut masks);
                    }
                    frame.secret_name = Some(name);
                }
            } else if key.eq_ignore_ascii_case("value") {
                match &frame.secret_name {
                    Some(name) => {
                        let value = json_string(&text[value_start..value_end]);
                        let with = serde_json::to_string(&masked_pair_value(name, &value))
                            .unwrap_or_else(|_| masked_value.clone());
                        mask(value_start, value_end, with, &mut masks);
                    }
                    None => frame.value = Some((value_start, value_end)),
                }
            }
        }
        i = value_end.max(colon + 1);
    }
    masks.sort_by_key(|m| m.0);
    // Two masks of one value (a pair's value masked by its shape, then as its name's header
    // value, `Bearer ‹redacted›`): the later, knowing more, wins.
    masks.dedup_by(|later, earlier| {
        let same = later.0 == earlier.0;
        if same {
            std::mem::swap(later, earlier);
        }
        same
    });
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end, with) in masks {
        if start < copied {
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str(&with);
        copied = end;
    }
    out.push_str(&text[copied..]);
    out
}

/// Masks the secret pairs of a form-like text (`a=1&client_secret=…`), whatever else it holds:
/// a pair starts the text or follows `&` or a line break, and a secret key's value (the key
/// decoded before matching, quotes and spaces around it ignored) runs to the next `&` or line
/// break — spaces, quotes and braces included — and becomes [`REDACTED_URL_VALUE`]. Text
/// without such a pair is kept byte for byte.
fn redact_form_text(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut start = 0;
    while start <= bytes.len() {
        let end =
            memchr::memchr3(b'&', b'\n', b'\r', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        if let Some(eq) = memchr::memchr(b'=', &bytes[start..end]).map(|i| start + i) {
            let key = percent_decode(&text[start..eq]);
            let key = key.trim().trim_matches(['"', '\'']).trim();
            let value = &text[eq + 1..end];
            if !value.trim().is_empty()
                && value != REDACTED_URL_VALUE
                && !key.is_empty()
                && (is_secret_query_param(key) || {
                    let value = percent_decode(value);
                    looks_like_credential(&value) || !private_key_blocks(&value).is_empty()
                })
            {
                out.push_str(&text[copied..eq + 1]);
                out.push_str(REDACTED_URL_VALUE);
                copied = end;
            }
        }
        start = end + 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// A multipart body (`--boundary` lines, each part with its headers): a part whose
/// `Content-Disposition` names a secret field has its content masked, every other part's content
/// is redacted as a body of its own ([`redact_body`]: JSON, forms). `None` when the text is not
/// multipart.
fn redact_multipart(body: &str) -> Option<String> {
    let first = body.len() - body.trim_start().len();
    let rest = &body[first..];
    if !rest.starts_with("--") {
        return None;
    }
    let line_end = first + rest.find('\n')?;
    let boundary = body[first + 2..line_end].trim_end_matches('\r');
    if boundary.is_empty() || !body.to_ascii_lowercase().contains("content-disposition") {
        return None;
    }
    let delimiter = format!("--{boundary}");
    // Where each delimiter line starts.
    let mut marks = Vec::new();
    let mut from = first;
    while let Some(i) = body[from..].find(&delimiter) {
        let at = from + i;
        if at == first || body[..at].ends_with('\n') {
            marks.push(at);
        }
        from = at + delimiter.len();
    }
    let mut out = String::with_capacity(body.len());
    out.push_str(&body[..first]);
    for (k, &at) in marks.iter().enumerate() {
        let next = marks.get(k + 1).copied().unwrap_or(body.len());
        let Some(nl) = body[at..next].find('\n').map(|i| at + i + 1) else {
            out.push_str(&body[at..next]);
            continue;
        };
        out.push_str(&body[at..nl]);
        let part = &body[nl..next];
        let head_end = part
            .find("\r\n\r\n")
            .map(|i| i + 4)
            .or_else(|| part.find("\n\n").map(|i| i + 2));
        let Some(head_end) = head_end else {
            out.push_str(part);
            continue;
        };
        let (head, content) = part.split_at(head_end);
        // The line break before the next delimiter belongs to the delimiter.
        let tail = if content.ends_with("\r\n") {
            2
        } else {
            usize::from(content.ends_with('\n'))
        };
        let (content, line_break) = content.split_at(content.len() - tail);
        let name = head
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("content-disposition"))
            .and_then(|l| {
                let lower = l.to_ascii_lowercase();
                let at = lower.find("name=")?;
                // `name=`, not the `filename=` before or after it.
                if lower[..at].ends_with("file") {
                    let again = lower[at + 5..].find(" name=").map(|i| at + 5 + i + 1)?;
                    Some(l[again + 5..].to_owned())
                } else {
                    Some(l[at + 5..].to_owned())
                }
            })
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .trim_matches('"')
                    .to_owned()
            });
        out.push_str(head);
        match name {
            Some(n) if is_secret_query_param(&n) && !content.trim().is_empty() => {
                out.push_str(REDACTED_URL_VALUE);
            }
            _ => out.push_str(&redact_body(content)),
        }
        out.push_str(line_break);
    }
    Some(out)
}

/// The request body with its secrets masked: a JSON body's secret fields at any depth (see
/// `redact_json_text`; values become `"‹redacted›"`, formatting kept), a multipart body's
/// secret parts (`redact_multipart`), and any other text's secret `key=value` pairs
/// (`redact_form_text`: form-urlencoded bodies, with or without odd characters; a value shaped
/// like a key under any name too) and the keys inside any other text ([`is_credential_token`]).
/// A body without secrets is returned byte for byte. Idempotent.
pub fn redact_body(body: &str) -> String {
    let trimmed = body.trim_start_matches('\u{feff}').trim();
    if trimmed.starts_with(['{', '[']) {
        return redact_json_text(body);
    }
    if let Some(out) = redact_multipart(body) {
        return out;
    }
    let out = redact_form_text(body);
    mask_credential_tokens(&out, REDACTED_URL_VALUE).unwrap_or(out)
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
            "hf_AbCdEfGhIjKl",
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
        // A user name alone is where a token goes (`https://TOKEN@host`): redacted too.
        assert_eq!(redact_url("https://me@host/p"), "https://REDACTED@host/p");
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
    fn the_gaps_an_outside_review_found_are_closed() {
        // Form bodies with a space, a quote, a brace, a line break around or inside the secret.
        for (body, kept) in [
            ("a=1&client_secret=S1 two&scope=a b", "scope=a b"),
            ("a=1&client_secret=\"S1\"&scope=x", "scope=x"),
            ("a=1&client_secret={S1}&scope=x", "scope=x"),
            ("a=1\nclient_secret=S1\nscope=x", "scope=x"),
            ("password=S1", ""),
        ] {
            let out = redact_body(body);
            assert!(!out.contains("S1"), "{body:?} → {out:?}");
            assert!(out.contains(kept), "{body:?} → {out:?}");
            assert_eq!(redact_body(&out), out, "idempotent: {body:?}");
        }
        // Arrays under secret keys; header pairs and name/value objects; jwt and its family.
        let body = r#"{"secrets":["S2",{"id":"S3"},[9876543]],"headers":[["Authorization","Bearer S4"],["Accept","x"]],"env":[{"value":"S5","name":"OPENAI_API_KEY"},{"name":"Accept","value":"y"}],"jwt":"S6","client_assertion":"S7","otp":123456,"required":["api_key","city"],"max_tokens":3}"#;
        let out = redact_body(body);
        for secret in ["S2", "S3", "9876543", "S4", "S5", "S6", "S7", "123456"] {
            assert!(!out.contains(secret), "{secret} in {out}");
        }
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["headers"][0][1], "Bearer ‹redacted›");
        assert_eq!(v["headers"][1][1], "x");
        assert_eq!(v["env"][1]["value"], "y");
        assert_eq!(v["required"], serde_json::json!(["api_key", "city"]));
        assert_eq!(v["max_tokens"], 3);
        assert_eq!(redact_body(&out), out, "idempotent");
        // Multipart: a secret part, and JSON inside another part.
        let multipart = "--b1\r\nContent-Disposition: form-data; name=\"api_key\"\r\n\r\nS8\r\n--b1\r\nContent-Disposition: form-data; name=\"cfg\"; filename=\"c.json\"\r\n\r\n{\"token\":\"S9\"}\r\n--b1--\r\n";
        let out = redact_body(multipart);
        assert!(!out.contains("S8") && !out.contains("S9"), "{out}");
        assert!(
            out.contains("name=\"cfg\"") && out.ends_with("--b1--\r\n"),
            "{out}"
        );
        assert_eq!(redact_body(&out), out, "idempotent");
        // URLs: a user-only userinfo, and the fragment's pairs.
        assert_eq!(
            redact_url("https://TOKEN1@h/p?q=1#access_token=S10&state=s"),
            "https://REDACTED@h/p?q=1#access_token=REDACTED&state=s"
        );
        assert_eq!(redact_url("https://h/p#frag"), "https://h/p#frag");
        assert_eq!(redact_url("https://@h/p"), "https://@h/p");
        for key in [
            "jwt",
            "id_jwt",
            "client_assertion",
            "otp",
            "pin",
            "passcode",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for header in ["X-JWT-Assertion", "X-Signature", "X-Credential"] {
            assert!(is_secret_header(header), "{header}");
        }
    }

    #[test]
    fn every_cut_of_a_gapped_body_hides_a_complete_secret() {
        let body = r#"{"headers":[["Authorization","Bearer sk-LEAK-1"]],"env":[{"name":"X-Api-Key","value":"sk-LEAK-2"}],"secrets":["sk-LEAK-3"]}"#;
        for (cut, _) in body.char_indices().chain([(body.len(), ' ')]) {
            let out = redact_body(&body[..cut]);
            // A secret shows in the output only if it was whole in the cut body.
            for secret in ["sk-LEAK-1", "sk-LEAK-2", "sk-LEAK-3"] {
                assert!(!out.contains(secret), "cut {cut}: {out}");
            }
            assert_eq!(redact_body(&out), out, "idempotent at cut {cut}");
        }
    }

    /// Realistic keys of each family (made up, each unique).
    const SHAPED: &[&str] = &[
        "sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f",
        "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe",
        "sk-9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "AKIAQWERTYUIOP123456",
        "ASIA7EXAMPLEZXCVBNM2",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
        "ghp_aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "npm_aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2",
        "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAw",
        "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",
    ];

    #[test]
    fn keys_are_redacted_by_shape_under_ordinary_names_and_in_metadata_pairs() {
        for key in SHAPED {
            assert!(looks_like_credential(key), "{key}");
            assert!(is_credential_token(key), "{key}");
            // A JSON value under an ordinary key, in an array, inside a sentence.
            let body = serde_json::json!({
                "note": key,
                "list": ["x", key],
                "content": format!("my key is {key}. thanks"),
                "max_tokens": 3,
            })
            .to_string();
            let out = redact_body(&body);
            assert!(!out.contains(key), "{key}: {out}");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["note"], REDACTED);
            assert_eq!(v["list"][0], "x");
            assert_eq!(v["content"], format!("my key is {REDACTED}. thanks"));
            assert_eq!(v["max_tokens"], 3);
            assert_eq!(redact_body(&out), out, "idempotent");
            // A form body, a plain text body, a header, a URL path and query.
            let form = redact_body(&format!("a=1&note={key}&b=2"));
            assert_eq!(form, "a=1&note=REDACTED&b=2");
            let text = redact_body(&format!("hello {key} bye"));
            assert_eq!(text, "hello REDACTED bye");
            let mut h = vec![("X-Debug".to_owned(), format!("id=7; k={key}"))];
            redact_headers(&mut h);
            assert_eq!(h[0].1, REDACTED);
            let url = redact_url(&format!("https://h/v1/keys/{key}/usage?q={key}"));
            assert_eq!(url, "https://h/v1/keys/REDACTED/usage?q=REDACTED");
            let path = redact_url(&format!("/v1/models/m:{key}/x"));
            assert_eq!(path, "/v1/models/m:REDACTED/x");
        }
        // Metadata pairs: `key`/`name`/`header` naming a secret, the value masked (number too),
        // either order; ordinary pairs stay.
        let body = r#"{"metadata":[{"key":"Authorization","value":"Bearer SECRET-1"},{"value":"SECRET-2","key":"x-api-key"},{"name":"x-api-key","value":"SECRET-3"},{"header":"X-Auth-Token","value":"SECRET-4"},{"key":"otp","value":918273},{"key":"region","value":"us-east-1"},{"name":"Accept","value":"*/*"}]}"#;
        let out = redact_body(body);
        for secret in ["SECRET-1", "SECRET-2", "SECRET-3", "SECRET-4", "918273"] {
            assert!(!out.contains(secret), "{secret} in {out}");
        }
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["metadata"][0]["value"], "Bearer ‹redacted›");
        assert_eq!(v["metadata"][5]["value"], "us-east-1");
        assert_eq!(v["metadata"][6]["value"], "*/*");
        assert_eq!(redact_body(&out), out, "idempotent");
        // A body cut right after a key, inside its string, still loses it.
        let key = SHAPED[0];
        for body in [
            format!(r#"{{"note":"{key}"#),
            format!(r#"{{"messages":[{{"content":"see {key}"#),
            format!(r#"{{"list":["x", "{key}"#),
            format!(r#"{{"list":["x", "see {key}"#),
        ] {
            let out = redact_body(&body);
            assert!(!out.contains(key), "{out}");
            assert_eq!(redact_body(&out), out, "idempotent");
        }
    }

    /// Session ids in a path segment's matrix parameters (`;jsessionid=`) and under session names
    /// in a query are redacted; other matrix parameters and segments stay.
    #[test]
    fn session_ids_in_matrix_parameters_and_queries_are_redacted() {
        for (url, want) in [
            (
                "https://h/app;jsessionid=SessA1b2C3/v1/chat?q=1",
                "https://h/app;jsessionid=REDACTED/v1/chat?q=1",
            ),
            (
                "/shop/cart;PHPSESSID=ab12cd34;lang=en/x",
                "/shop/cart;PHPSESSID=REDACTED;lang=en/x",
            ),
            (
                "https://h/v1?session_token=Zz9&JSESSIONID=Yy8&page=2",
                "https://h/v1?session_token=REDACTED&JSESSIONID=REDACTED&page=2",
            ),
            ("https://h/a;v=1/b;lang=en", "https://h/a;v=1/b;lang=en"),
        ] {
            assert_eq!(redact_url(url), want, "{url}");
            assert_eq!(redact_url(want), want, "idempotent");
        }
    }

    /// A credential with its `Authorization` scheme (`Bearer …`, `Basic …`) and a PEM private key
    /// are secrets by their shape alone: under an ordinary header name, an ordinary JSON key, in a
    /// form or text body, a query value; prose that merely names a scheme stays.
    #[test]
    fn scheme_credentials_and_private_keys_are_redacted_under_any_name() {
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEApemSecretLine1\nQ29udGludWVkpemSecretLine2\n-----END RSA PRIVATE KEY-----";
        for (value, secret) in [
            ("Bearer q8Zr2LmXyWv41Tn", "q8Zr2LmXyWv41Tn"),
            ("basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"),
            ("Token 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
            ("ApiKey Zz9yYx8wWv7u", "Zz9yYx8wWv7u"),
            (pem, "pemSecretLine"),
        ] {
            assert!(contains_credential(value), "{value}");
            let mut h = vec![("X-Forwarded-Credential-Holder".to_owned(), value.to_owned())];
            h.push(("X-Upstream".to_owned(), value.to_owned()));
            redact_headers(&mut h);
            assert!(h.iter().all(|(_, v)| v == REDACTED), "{h:?}");
            let body = serde_json::json!({"note": value, "deep": {"list": [value]}, "content": format!("use {value} here")}).to_string();
            let out = redact_body(&body);
            assert!(!out.contains(secret), "{secret}: {out}");
            assert_eq!(redact_body(&out), out, "idempotent");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["note"], REDACTED, "{out}");
            let encoded = value.replace(' ', "+").replace('\n', "%0A");
            let text = redact_body(&format!("a=1&note={encoded}&b=2"));
            assert!(!text.contains(secret), "{text}");
            let url = redact_url(&format!("https://h/v1?q={encoded}"));
            assert!(!url.contains(secret), "{url}");
        }
        // A PEM block in a plain text body, and one cut before its END line.
        let out = redact_body(&format!("key file:\n{pem}\nthanks"));
        assert!(
            !out.contains("pemSecretLine") && out.ends_with("\nthanks"),
            "{out}"
        );
        let cut = &pem[..60];
        assert!(
            !redact_body(&format!(r#"{{"k":"{}"#, cut.replace('\n', "\\n"))).contains("pemSecret")
        );
        // Prose and near misses stay.
        for kept in [
            "Bearer authentication",
            "Bearer token required",
            "Basic plan",
            "Token count",
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
            "Bearer ${OPENAI_API_KEY}",
        ] {
            let mut h = vec![("X-Note".to_owned(), kept.to_owned())];
            redact_headers(&mut h);
            assert_eq!(h[0].1, kept);
            let body = serde_json::json!({"note": kept}).to_string();
            assert_eq!(redact_body(&body), body);
        }
    }

    #[test]
    fn ordinary_stream_data_is_not_taken_for_a_key() {
        // Ids, model names, base64, prose and near misses: kept byte for byte.
        let kept = [
            "call_Ab3dEf6hIj9lMn2pQr5tUv8x",
            "toolu_01A09q90qw90lq917835lq9",
            "chatcmpl-9f8e7d6c5b4a39281706f5e4d3c2b1a0",
            "msg_01XFDUDYJgAACzvnptvVoYEL",
            "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
            "fc_67ccd3acc8d48190a77525dc6de64b4104becb25c2f3a9b4",
            "gpt-4o-mini-2024-07-18",
            "claude-3-5-sonnet-20241022",
            "sk-learn-compatible",
            "skeleton-key-generator",
            "ASIA-PACIFIC-SOUTHEAST",
            "ASIAPACIFICREGIONS",
            "AKIA is how an AWS key id begins",
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk-sk-AIzaSyD9tSrke72PouQMnMXa7eZSW0jkFMBWYAAAAABJRU5ErkJggg",
            "eyJhbGciOiJIUzI1NiJ9",
            "The model said: use the sk- prefix for secret keys.",
            "hf_hub_download",
            "$OPENAI_API_KEY",
        ];
        for value in kept {
            assert!(!is_credential_token(value), "{value}");
            assert!(!contains_credential(value), "{value}");
            let body = serde_json::json!({"id": value, "content": [value]}).to_string();
            assert_eq!(redact_body(&body), body, "{value}");
            let text = format!("data: {value}\n");
            assert_eq!(redact_body(&text), text, "{value}");
            let mut h = vec![("X-Request-Id".to_owned(), value.to_owned())];
            redact_headers(&mut h);
            assert_eq!(h[0].1, value, "{value}");
            let url = format!("/v1/x/{}", value.replace(' ', "%20"));
            assert_eq!(redact_url(&url), url, "{value}");
        }
        // A JSON escape right before a key's letters is not part of a token: `\n` then `sk-…`.
        let escaped = r#"{"content":"line
sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f"}"#;
        assert!(!redact_body(escaped).contains("Ab3dEf6hIj9"));
    }

    #[test]
    fn deep_json_does_not_overflow() {
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(redact_body(&deep), deep);
    }
}
