//! Compressed bodies in captures: cassettes recorded without vcrpy's
//! `decode_compressed_response=True` (and some HAR exporters) keep the body as it came off the
//! wire, gzip-encoded. The body is decoded (gzip, or zlib / raw deflate for `deflate`) up to a
//! size limit, so a small hostile file cannot expand without bound.

use std::io::Read as _;

use crate::content::is_stream_body;

/// The body as a stream reader sees it: decoded when it is gzip (by its magic bytes, whatever the
/// header says) or when `content_encoding` names gzip or deflate and the body does not already
/// look like a stream (some recorders decode but keep the header). Another encoding (`br`,
/// `zstd`) is an error saying so. `limit` bounds the decoded size.
pub(crate) fn decode_body(
    body: Vec<u8>,
    content_encoding: Option<&str>,
    limit: u64,
) -> Result<Vec<u8>, String> {
    let encoding = content_encoding
        .map(|e| e.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let gzip_magic = body.starts_with(&[0x1f, 0x8b]);
    // A body that is already a stream or a JSON document was stored decoded, whatever the header says.
    let plain = || {
        is_stream_body(&body)
            || crate::content::decide(std::path::Path::new(""), &body).kind
                == crate::content::Kind::Body(crate::content::BodyForm::Document)
    };
    if gzip_magic || (matches!(encoding.as_str(), "gzip" | "x-gzip") && !plain()) {
        return read_limited(flate2::read::MultiGzDecoder::new(&body[..]), limit, "gzip");
    }
    if encoding == "deflate" && !plain() {
        return read_limited(flate2::read::ZlibDecoder::new(&body[..]), limit, "deflate").or_else(
            |_| {
                read_limited(
                    flate2::read::DeflateDecoder::new(&body[..]),
                    limit,
                    "deflate",
                )
            },
        );
    }
    if !matches!(
        encoding.as_str(),
        "" | "identity" | "gzip" | "x-gzip" | "deflate"
    ) && !plain()
    {
        return Err(format!(
            "stores a {encoding}-compressed body, which this build cannot decode (record with vcrpy's decode_compressed_response=True)"
        ));
    }
    Ok(body)
}

fn read_limited(reader: impl std::io::Read, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| format!("stores a {what} body that does not decode: {e}"))?;
    if out.len() as u64 > limit {
        return Err(format!(
            "stores a {what} body that decodes to more than {}",
            crate::text::plural(limit, "byte")
        ));
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_is_decoded_by_its_magic_or_its_header_and_bounded() {
        let body = b"data: {\"a\":1}\n\n".repeat(100);
        let z = gzip(&body);
        assert_eq!(decode_body(z.clone(), None, 1 << 20).unwrap(), body);
        assert_eq!(decode_body(z.clone(), Some("gzip"), 1 << 20).unwrap(), body);
        // Already decoded by the recorder, header kept: left alone.
        assert_eq!(
            decode_body(body.clone(), Some("gzip"), 1 << 20).unwrap(),
            body
        );
        let e = decode_body(z, None, 100).unwrap_err();
        assert!(e.contains("more than 100 bytes"), "{e}");
        let e = decode_body(b"\x1f\x8bnot gzip".to_vec(), None, 100).unwrap_err();
        assert!(e.contains("does not decode"), "{e}");
        let e = decode_body(b"\x00\x01binary".to_vec(), Some("br"), 100).unwrap_err();
        assert!(e.contains("br-compressed"), "{e}");
    }
}
