//! The message CRC32 of any span of the decoder's buffer in constant time, from CRCs of its
//! prefixes. After a message CRC mismatch the decoder looks for the next frame inside the bytes
//! the bad frame claimed, and every valid prelude it finds there claims a span of its own: checked
//! byte by byte, nested claims cost the square of the stream (a 4 MiB file of preludes that each
//! claim the rest took almost a minute). Instead, the CRC of the bytes from a fixed base is kept
//! every [`STEP`] bytes (each byte is hashed once), and a span's CRC is derived from its two ends
//! with the algebra zlib's `crc32_combine` uses: `crc(A‖B) = crc(A)·x^(8|B|) mod P ⊕ crc(B)`.

use std::collections::VecDeque;
use std::sync::OnceLock;

/// Bytes between two kept prefix CRCs: a span's ends cost at most this many bytes each to hash,
/// and the marks take 4 bytes per `STEP` bytes of buffer.
const STEP: u64 = 64;

/// CRC-32/ISO-HDLC's polynomial, bit-reflected.
const POLY: u32 = 0xEDB8_8320;

/// `a·b mod P` for two polynomials in the reflected representation (bit 31 is x⁰).
fn multmodp(a: u32, mut b: u32) -> u32 {
    let mut product = 0u32;
    let mut m = 1u32 << 31;
    while m != 0 {
        if a & m != 0 {
            product ^= b;
        }
        b = if b & 1 != 0 { (b >> 1) ^ POLY } else { b >> 1 };
        m >>= 1;
    }
    product
}

/// `SHIFTS[k][v]` = x^(8·v·256^k) mod P: moving a CRC past `n` bytes multiplies it by one entry
/// per byte of `n`.
fn shifts() -> &'static [[u32; 256]; 4] {
    static SHIFTS: OnceLock<Box<[[u32; 256]; 4]>> = OnceLock::new();
    SHIFTS.get_or_init(|| {
        let mut t = Box::new([[0u32; 256]; 4]);
        // x⁸: one byte.
        let mut unit = 1u32 << (31 - 8);
        for level in t.iter_mut() {
            level[0] = 1 << 31;
            for v in 1..256 {
                level[v] = multmodp(level[v - 1], unit);
            }
            unit = multmodp(level[255], unit);
        }
        t
    })
}

/// `crc`·x^(8n) mod P: the CRC of bytes `A` carried past `n` more bytes (all zero, before the
/// final conditioning cancels out).
fn shift(mut crc: u32, n: u64) -> u32 {
    let t = shifts();
    for (k, level) in t.iter().enumerate() {
        let byte = ((n >> (8 * k)) & 0xFF) as usize;
        if byte != 0 {
            crc = multmodp(level[byte], crc);
        }
    }
    // Frames are at most 2³² bytes long: higher bytes of `n` never occur (and are not needed
    // for spans inside one buffer).
    crc
}

/// The CRC of `B` from `crc(A)` and `crc(A‖B)`.
pub(super) fn span_crc(prefix_start: u32, prefix_end: u32, len: u64) -> u32 {
    prefix_end ^ shift(prefix_start, len)
}

/// One byte through the CRC register (zlib's table-driven step, no conditioning).
const fn step(table: &[u32; 256], c: u32, byte: u8) -> u32 {
    table[((c ^ byte as u32) & 0xFF) as usize] ^ (c >> 8)
}

const fn byte_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// The register step for one byte.
const TABLE: [u32; 256] = byte_table();

/// `OUT[b]`: what byte `b` contributes to the register eight bytes later, so it can be taken
/// out of a rolling window.
const OUT: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let mut c = step(&TABLE, 0, b as u8);
        let mut k = 0;
        while k < 8 {
            c = step(&TABLE, c, 0);
            k += 1;
        }
        t[b] = c;
        b += 1;
    }
    t
};

/// The CRC32 of eight zero bytes: with it, the CRC of an 8-byte window is `ZEROS8 ^ register`
/// where the register starts at 0 (the CRC is affine in its input).
const ZEROS8: u32 = {
    let mut c = !0u32;
    let mut k = 0;
    while k < 8 {
        c = step(&TABLE, c, 0);
        k += 1;
    }
    !c
};

/// The first offset of `b` whose 12 bytes could be a prelude: the CRC32 of the eight bytes
/// there equals the four after them, and `accept` agrees (the length checks). The window's CRC
/// is rolled one byte at a time, so a corrupt stretch costs a few table lookups per byte
/// instead of a hash per byte.
pub(super) fn next_prelude(b: &[u8], accept: impl Fn(&[u8]) -> bool) -> Option<usize> {
    let last = b.len().checked_sub(super::PRELUDE_BYTES)?;
    let mut reg = 0u32;
    for &x in &b[..8] {
        reg = step(&TABLE, reg, x);
    }
    // The four bytes after the window, as a big-endian number, rolled along with it (written
    // out rather than with helpers: this loop runs once per byte of a corrupt stretch).
    let mut stated = (u32::from(b[8]) << 16) | (u32::from(b[9]) << 8) | u32::from(b[10]);
    for (i, w) in b.windows(super::PRELUDE_BYTES).enumerate() {
        stated = (stated << 8) | u32::from(w[11]);
        if stated == ZEROS8 ^ reg && accept(w) {
            return Some(i);
        }
        if i == last {
            break;
        }
        reg = TABLE[((reg ^ u32::from(w[8])) & 0xFF) as usize] ^ (reg >> 8) ^ OUT[w[0] as usize];
    }
    None
}

/// Prefix CRCs over the decoder's buffer: `marks[j]` is the CRC of the bytes from a fixed base
/// (wherever the marks were started) up to stream offset `origin + j·STEP`.
#[derive(Debug, Default)]
pub(super) struct Prefixes {
    origin: u64,
    marks: VecDeque<u32>,
}

impl Prefixes {
    /// The CRC from the base up to stream offset `at`; `buf` holds the stream from `buf_start`,
    /// and `at` is within it (or at its end).
    fn at(&mut self, buf: &[u8], buf_start: u64, at: u64) -> u32 {
        if self.marks.is_empty() || at < self.origin || self.origin < buf_start {
            // Start again from here (the base moves; spans are measured between two calls that
            // share it, see `span`).
            self.marks.clear();
            self.origin = at;
            self.marks.push_back(crc32fast::hash(&[]));
        }
        let j = ((at - self.origin) / STEP) as usize;
        while self.marks.len() <= j {
            let from = self.origin + (self.marks.len() as u64 - 1) * STEP;
            let i = (from - buf_start) as usize;
            let prev = self.marks.back().copied().unwrap_or_default();
            let mut h = crc32fast::Hasher::new_with_initial(prev);
            h.update(&buf[i..i + STEP as usize]);
            self.marks.push_back(h.finalize());
        }
        let mark = self.origin + j as u64 * STEP;
        let mut h = crc32fast::Hasher::new_with_initial(self.marks[j]);
        h.update(&buf[(mark - buf_start) as usize..(at - buf_start) as usize]);
        h.finalize()
    }

    /// The CRC32 of the stream bytes `start..end`, all in `buf` (which holds the stream from
    /// `buf_start`).
    pub(super) fn span(&mut self, buf: &[u8], buf_start: u64, start: u64, end: u64) -> u32 {
        let s = self.at(buf, buf_start, start);
        let origin = self.origin;
        let e = self.at(buf, buf_start, end);
        if self.origin != origin {
            // The marks started again between the two ends (cannot happen for end ≥ start, but
            // a wrong answer here would pass a corrupt frame): hash the span directly.
            let (a, b) = ((start - buf_start) as usize, (end - buf_start) as usize);
            return crc32fast::hash(&buf[a..b]);
        }
        span_crc(s, e, end - start)
    }

    /// The buffer is about to drop the bytes before stream offset `keep`: returns where it must
    /// keep bytes from instead (at most `STEP - 1` bytes earlier) so the marks stay usable, and
    /// forgets the marks before it. Marks that do not reach `keep` are all forgotten.
    pub(super) fn keep_from(&mut self, keep: u64) -> u64 {
        let covered = self.origin + (self.marks.len() as u64).saturating_sub(1) * STEP;
        if self.marks.is_empty() || keep < self.origin || covered < keep {
            self.marks.clear();
            return keep;
        }
        let j = (keep - self.origin) / STEP;
        self.marks.drain(..j as usize);
        self.origin += j * STEP;
        self.origin
    }

    /// Forget every mark (the buffer is emptied).
    pub(super) fn clear(&mut self) {
        self.marks.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_crc_from_prefixes_equals_hashing_the_span() {
        let mut rng = fastrand::Rng::with_seed(0xC4C);
        let buf: Vec<u8> = (0..5000).map(|_| rng.u8(..)).collect();
        let base = 1_000_000u64;
        let mut p = Prefixes::default();
        for _ in 0..500 {
            let a = rng.usize(0..buf.len());
            let b = rng.usize(a..=buf.len());
            let want = crc32fast::hash(&buf[a..b]);
            let got = p.span(&buf, base, base + a as u64, base + b as u64);
            assert_eq!(got, want, "{a}..{b}");
        }
        // Spans longer than 2⁸ and 2¹⁶ bytes use the higher shift tables.
        let big: Vec<u8> = (0..200_000).map(|_| rng.u8(..)).collect();
        let mut p = Prefixes::default();
        for (a, b) in [(0, 200_000), (3, 70_001), (65_535, 199_999), (10, 10)] {
            assert_eq!(
                p.span(&big, 0, a, b),
                crc32fast::hash(&big[a as usize..b as usize])
            );
        }
    }

    #[test]
    fn the_rolling_window_finds_the_same_preludes_as_hashing_each_offset() {
        let mut rng = fastrand::Rng::with_seed(0x12);
        for round in 0..200 {
            let mut b: Vec<u8> = (0..rng.usize(0..300)).map(|_| rng.u8(..)).collect();
            // Plant a few preludes (valid CRCs) at random offsets.
            for _ in 0..rng.usize(0..3) {
                if b.len() < 12 {
                    break;
                }
                let at = rng.usize(0..=b.len() - 12);
                let c = crc32fast::hash(&b[at..at + 8]);
                b[at + 8..at + 12].copy_from_slice(&c.to_be_bytes());
            }
            let naive = (0..b.len().saturating_sub(11))
                .find(|&i| crc32fast::hash(&b[i..i + 8]).to_be_bytes() == b[i + 8..i + 12]);
            assert_eq!(next_prelude(&b, |_| true), naive, "round {round}");
        }
        assert_eq!(ZEROS8, crc32fast::hash(&[0; 8]));
    }

    #[test]
    fn marks_survive_dropping_the_front_of_the_buffer() {
        let mut rng = fastrand::Rng::with_seed(0xD0);
        let stream: Vec<u8> = (0..4000).map(|_| rng.u8(..)).collect();
        let mut p = Prefixes::default();
        assert_eq!(
            p.span(&stream, 0, 100, 3000),
            crc32fast::hash(&stream[100..3000])
        );
        // The decoder drops what it handed out, keeping from where the marks say.
        let kept = p.keep_from(1234);
        assert!(kept <= 1234 && 1234 - kept < STEP, "{kept}");
        let buf = &stream[kept as usize..];
        for (a, b) in [(1234u64, 3999u64), (1300, 2000), (2999, 3000)] {
            assert_eq!(
                p.span(buf, kept, a, b),
                crc32fast::hash(&stream[a as usize..b as usize])
            );
        }
        let again = p.keep_from(3900);
        assert!(again <= 3900 && 3900 - again < STEP, "{again}");
        assert_eq!(
            p.span(&stream[again as usize..], again, 3900, 4000),
            crc32fast::hash(&stream[3900..4000])
        );
        // Past what the marks cover, they are forgotten and the bytes need not be kept.
        assert_eq!(p.keep_from(100_000), 100_000);
    }
}
