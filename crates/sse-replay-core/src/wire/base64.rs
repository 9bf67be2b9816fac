//! The one base64 decoder: bodies kept as base64 text, HAR and cassette bodies, and the `bytes`
//! of an InvokeModel chunk all go through it, so they accept the same forms.

/// Decode standard or URL-safe base64 (padding optional, whitespace ignored, the two alphabets'
/// 62nd/63rd characters both accepted, and anything after the first `=` ignored, as before the
/// `base64` crate did the decoding).
pub fn decode(s: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let data = s.split('=').next().unwrap_or_default();
    let standard: Vec<u8> = data
        .bytes()
        .filter(|c| !c.is_ascii_whitespace())
        .map(|c| match c {
            b'-' => b'+',
            b'_' => b'/',
            c => c,
        })
        .collect();
    LENIENT.decode(standard).map_err(|e| match e {
        base64::DecodeError::InvalidByte(_, byte) => {
            format!("invalid base64 character {:?}", char::from(byte))
        }
        other => format!("invalid base64: {other}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient() {
        assert_eq!(
            decode("ZGF0YTogW0RPTkVdCgo=").as_deref(),
            Ok(b"data: [DONE]\n\n".as_slice())
        );
        assert_eq!(decode("YWI").as_deref(), Ok(b"ab".as_slice()));
        // URL-safe alphabet, whitespace, and anything after the padding.
        assert_eq!(
            decode("-_-_\n-_8=\r\n").as_deref(),
            Ok(b"\xfb\xff\xbf\xfb\xff".as_slice())
        );
        assert_eq!(decode("+/+/").as_deref(), Ok(b"\xfb\xff\xbf".as_slice()));
        assert_eq!(decode("YQ==ignored").as_deref(), Ok(b"a".as_slice()));
        assert_eq!(
            decode("a$b"),
            Err("invalid base64 character '$'".to_owned())
        );
    }
}
