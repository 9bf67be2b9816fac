//! Proof of reading: every case serves its recording with the values a client can only know by
//! reading them changed, per case and per run, so a pass cannot come from an answer looked up
//! beforehand (an earlier `export` of the same recording, a constant per dialect).
//!
//! What changes: the characters of the client calls' ids and of the string values inside their
//! arguments (a custom tool's free-form input as a whole), each replaced by a character of the
//! same class and the same UTF-8 length through one substitution per case (a cyclic permutation
//! of `a–z`, `A–Z` and `0–9`, a shift inside the CJK, Hiragana and Cyrillic letters), drawn from
//! the run's seed, the recording's name and the variant. Keys, numbers, names, event types and
//! everything else stay as they are. The substitution is applied to the bytes where they are, so
//! the body keeps its length, its reads (chunking), its framing and its quirks: an argument
//! split across fragments is changed piece by piece (the substitution is the same for every
//! piece), a value the stream repeats (Responses' `.done` events, `response.completed`, an id
//! referenced again) is changed the same way everywhere, a JSON-escaped `\uXXXX` stays an escape
//! of the same length, an event base64-encoded in a frame (InvokeModel's `chunk`) is varied
//! inside and encoded again, and a binary AWS frame whose payload changed gets its CRC again
//! (only if it had a valid one: a corrupt frame stays corrupt).
//!
//! The calls a client must print are then read from the changed bytes by the analysis, as for
//! any other case (never patched by hand). The change is checked: the changed recording must give
//! the same calls (names, statuses, shapes, lengths), the same findings and the same ending, with
//! values that differ. When it does not, or when the calls hold too few values to change, the
//! case is served as recorded and says so ([`Variation::unproven`]).

use serde_json::Value;

use sse_replay_core::analysis::{Analysis, SourceInfo, SourceKind};
use sse_replay_core::framing::Framing;
use sse_replay_core::pipeline::Options;
use sse_replay_core::recording::{Chunk, Recording};

use super::Variant;
use super::judge::{Args, CaseCall, Expected, json_eq};

/// The least chance, in bits, that a client which did not read a case guesses its values: a case
/// whose changed values carry less is not counted as proof (see [`Variation::unproven`]).
pub const MIN_BITS: f64 = 16.0;

/// A recording with its values changed for one case.
#[derive(Clone, Debug)]
pub struct Variation {
    /// What the case serves: the changed recording, or the recording as it was when it could not
    /// be changed.
    pub recording: Recording,
    /// How hard the changed values are to guess: the sum over the distinct characters changed of
    /// log2 of the choices each had.
    pub bits: f64,
    /// Why the recording was served unchanged (`None`: it was changed).
    pub failure: Option<String>,
}

impl Variation {
    /// Why a pass on this case proves nothing about reading (`None`: it does).
    pub fn unproven(&self) -> Option<String> {
        if let Some(why) = &self.failure {
            return Some(format!("the recording could not be varied: {why}"));
        }
        (self.bits < MIN_BITS).then(|| {
            if self.bits == 0.0 {
                "the stream holds no id or string value to vary, so its calls could be known without reading it".to_owned()
            } else {
                format!(
                    "its calls hold too few ids and string values to vary ({:.0} bits of chance, {MIN_BITS:.0} needed), so they could be guessed without reading the stream",
                    self.bits
                )
            }
        })
    }
}

/// The seed of one case: the run's seed, the recording's file stem (so a bundled recording
/// given by its path to `--recordings` is served as the built-in suite serves it) and the
/// variant, mixed (FNV-1a, the same on every platform and Rust version).
pub fn case_seed(run_seed: u64, recording: &str, variant: Variant) -> u64 {
    let stem = std::path::Path::new(recording).file_stem().map_or_else(
        || recording.to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    };
    eat(&run_seed.to_le_bytes());
    eat(stem.as_bytes());
    eat(variant.name().as_bytes());
    h
}

/// A class of characters the substitution maps into itself: all of one UTF-8 length.
#[derive(Clone, Copy)]
struct Class {
    first: u32,
    len: u32,
}

const LOWER: Class = Class {
    first: 'a' as u32,
    len: 26,
};
const UPPER: Class = Class {
    first: 'A' as u32,
    len: 26,
};
const DIGIT: Class = Class {
    first: '0' as u32,
    len: 10,
};
/// CJK Unified Ideographs (three bytes each): each is replaced by one of [`COMMON_HANZI`].
const CJK: Class = Class {
    first: 0x4E00,
    len: 0x5200,
};

/// The hanzi a CJK character is replaced by: the first five rows of GB 2312 level 1 (470 common
/// characters, all three UTF-8 bytes), which every CJK font covers (the app's subset font holds
/// GB 2312 whole), so a varied stream stays drawable.
const COMMON_HANZI: &str = "啊阿埃挨哎唉哀皑癌蔼矮艾碍爱隘鞍氨安俺按暗岸胺案肮昂盎凹敖熬翱袄傲奥懊澳芭捌扒叭\
     吧笆八疤巴拔跋靶把耙坝霸罢爸白柏百摆佰败拜稗斑班搬扳般颁板版扮拌伴瓣半办绊邦帮梆\
     榜膀绑棒磅蚌镑傍谤苞胞包褒剥薄雹保堡饱宝抱报暴豹鲍爆杯碑悲卑北辈背贝钡倍狈备惫焙\
     被奔苯本笨崩绷甭泵蹦迸逼鼻比鄙笔彼碧蓖蔽毕毙毖币庇痹闭敝弊必辟壁臂避陛鞭边编贬扁\
     便变卞辨辩辫遍标彪膘表鳖憋别瘪彬斌濒滨宾摈兵冰柄丙秉饼炳病并玻菠播拨钵波博勃搏铂\
     箔伯帛舶脖膊渤泊驳捕卜哺补埠不布步簿部怖擦猜裁材才财睬踩采彩菜蔡餐参蚕残惭惨灿苍\
     舱仓沧藏操糙槽曹草厕策侧册测层蹭插叉茬茶查碴搽察岔差诧拆柴豺搀掺蝉馋谗缠铲产阐颤\
     昌猖场尝常长偿肠厂敞畅唱倡超抄钞朝嘲潮巢吵炒车扯撤掣彻澈郴臣辰尘晨忱沉陈趁衬撑称\
     城橙成呈乘程惩澄诚承逞骋秤吃痴持匙池迟弛驰耻齿侈尺赤翅斥炽充冲虫崇宠抽酬畴踌稠愁\
     筹仇绸瞅丑臭初出橱厨躇锄雏滁除楚础储矗搐触处揣川穿椽传船喘串疮窗幢床闯创吹炊捶锤\
     垂春椿醇唇淳纯蠢戳绰疵茨磁雌辞慈瓷词此刺赐次聪葱囱匆从丛凑粗醋簇促蹿篡窜摧崔催脆\
     瘁粹淬翠村存寸磋撮搓措挫错搭达答瘩打大呆歹傣戴带殆代贷袋待逮";
/// Hiragana letters (three bytes each).
const HIRAGANA: Class = Class {
    first: 0x3041,
    len: 0x56,
};
/// Cyrillic capital and small letters А–я (two bytes each).
const CYRILLIC: Class = Class {
    first: 0x0410,
    len: 0x40,
};

/// One case's substitution: a cyclic permutation (no character maps to itself) of each ASCII
/// class, a non-zero shift in each of the others.
#[derive(Clone, Debug)]
pub struct Cipher {
    lower: [u8; 26],
    upper: [u8; 26],
    digit: [u8; 10],
    cjk: u32,
    hiragana: u32,
    cyrillic: u32,
}

/// A random cyclic permutation of `0..N` (Sattolo's algorithm): a single cycle, no fixed point.
fn cycle<const N: usize>(rng: &mut fastrand::Rng) -> [u8; N] {
    let mut p = [0u8; N];
    for (i, v) in p.iter_mut().enumerate() {
        *v = i as u8;
    }
    for i in (1..N).rev() {
        let j = rng.usize(0..i);
        p.swap(i, j);
    }
    p
}

impl Cipher {
    /// The substitution of `seed`.
    pub fn new(seed: u64) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed);
        Self {
            lower: cycle(&mut rng),
            upper: cycle(&mut rng),
            digit: cycle(&mut rng),
            cjk: rng.u32(1..CJK.len),
            hiragana: rng.u32(1..HIRAGANA.len),
            cyrillic: rng.u32(1..CYRILLIC.len),
        }
    }

    /// The class of `c`, if the substitution changes it.
    fn class(c: char) -> Option<Class> {
        let u = c as u32;
        [LOWER, UPPER, DIGIT, CJK, HIRAGANA, CYRILLIC]
            .into_iter()
            .find(|k| (k.first..k.first + k.len).contains(&u))
    }

    /// `c` substituted (`None`: a character the substitution leaves alone). Always another
    /// character of the same class, so of the same UTF-8 length.
    pub fn map(&self, c: char) -> Option<char> {
        let class = Self::class(c)?;
        let i = c as u32 - class.first;
        let j = match class.first {
            f if f == LOWER.first => u32::from(self.lower[i as usize]),
            f if f == UPPER.first => u32::from(self.upper[i as usize]),
            f if f == DIGIT.first => u32::from(self.digit[i as usize]),
            f if f == CJK.first => return Some(self.hanzi(c)),
            f if f == HIRAGANA.first => (i + self.hiragana) % class.len,
            _ => (i + self.cyrillic) % class.len,
        };
        char::from_u32(class.first + j)
    }

    /// A CJK character's replacement: the next-but-`shift` common hanzi for one of them, one
    /// picked by its code point for any other (never itself: it is not among them).
    fn hanzi(&self, c: char) -> char {
        let table: Vec<char> = COMMON_HANZI.chars().collect();
        let n = table.len() as u32;
        let at = match table.iter().position(|&h| h == c) {
            Some(i) => (i as u32 + 1 + self.cjk % (n - 1)) % n,
            None => (c as u32).wrapping_add(self.cjk) % n,
        };
        table.get(at as usize).copied().unwrap_or(c)
    }

    /// The bits of chance a changed `c` carries: log2 of the other characters it could become.
    fn bits(c: char) -> f64 {
        match Self::class(c) {
            Some(k) if k.first == CJK.first => {
                f64::from(COMMON_HANZI.chars().count() as u32 - 1).log2()
            }
            Some(k) => f64::from(k.len - 1).log2(),
            None => 0.0,
        }
    }

    /// `text` with the characters at `mask` (byte offsets of character starts) substituted.
    fn apply(&self, text: &str, mask: &[bool]) -> String {
        text.char_indices()
            .map(|(i, c)| {
                if mask.get(i).copied().unwrap_or(false) {
                    self.map(c).unwrap_or(c)
                } else {
                    c
                }
            })
            .collect()
    }
}

/// Which characters of an id change: after its last `_` or `-` when at least four letters or
/// digits follow (`call_`, `toolu_` stay), else all of them; none for an id of fewer than four
/// (`"0"`, `"1"`: too short to tell apart from other values of the stream).
fn id_mask(id: &str) -> Vec<bool> {
    let mut mask = vec![false; id.len()];
    let alnum = |s: &str| s.chars().filter(char::is_ascii_alphanumeric).count();
    let from = match id.rfind(['_', '-']) {
        Some(i) if alnum(&id[i + 1..]) >= 4 => i + 1,
        _ => 0,
    };
    if alnum(&id[from..]) < 4 {
        return mask;
    }
    for (i, c) in id.char_indices().skip_while(|(i, _)| *i < from) {
        mask[i] = Cipher::class(c).is_some();
    }
    mask
}

/// Keys whose string value names a kind rather than holding data (`"type": "create_file"` in an
/// apply_patch operation, `"type": "function"`): a client's schema may accept only the names it
/// knows, so changing one would test the schema, not whether the stream was read. Never varied.
const DISCRIMINATOR_KEYS: &[&str] = &["type"];

fn is_discriminator(key: &str) -> bool {
    DISCRIMINATOR_KEYS.contains(&key)
}

/// The characters of arguments text that are inside a JSON string value (not a key, not part of
/// an escape, not the value of a discriminator key such as `type`), as byte offsets of character
/// starts; every character for free-form text. The
/// lexer is tolerant: truncated or repeated JSON (`{"a":"x"}{"a":"x"}`) is read as far as it goes.
pub fn value_mask(text: &str, free_text: bool) -> Vec<bool> {
    let mut mask = vec![false; text.len()];
    // The last key read: a value under a discriminator key is kept as it is.
    let mut last_key = String::new();
    if free_text {
        for (i, c) in text.char_indices() {
            mask[i] = Cipher::class(c).is_some();
        }
        return mask;
    }
    let b = text.as_bytes();
    // true: an object (its strings alternate key, value).
    let mut stack: Vec<bool> = Vec::new();
    let mut expect_key = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                stack.push(true);
                expect_key = true;
            }
            b'[' => {
                stack.push(false);
                expect_key = false;
            }
            b'}' | b']' => {
                stack.pop();
                expect_key = false;
            }
            b':' => expect_key = false,
            b',' => expect_key = stack.last() == Some(&true),
            b'"' => {
                let key = expect_key;
                let discriminator = !key && is_discriminator(&last_key);
                if key {
                    last_key.clear();
                }
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += if b.get(i + 1) == Some(&b'u') { 6 } else { 2 };
                        while i < b.len() && !text.is_char_boundary(i) {
                            i += 1;
                        }
                        continue;
                    }
                    let Some(c) = text.get(i..).and_then(|s| s.chars().next()) else {
                        break;
                    };
                    if key {
                        last_key.push(c);
                    } else if !discriminator {
                        mask[i] = Cipher::class(c).is_some();
                    }
                    i += c.len_utf8();
                }
            }
            _ => {}
        }
        i += 1;
    }
    mask
}

/// One decoded character of a JSON string literal in the body.
#[derive(Clone, Copy, Debug)]
struct LitChar {
    c: char,
    /// Where its raw form starts in the body.
    at: usize,
    /// Its raw form is a `\uXXXX` escape (six bytes) rather than the character itself.
    escaped: bool,
    /// Its raw form is another escape (`\n`, a surrogate pair…): never substituted.
    other_escape: bool,
}

/// A JSON string literal found in the body.
#[derive(Clone, Debug)]
struct Lit {
    /// The byte after the closing quote.
    end: usize,
    /// Its opening quote.
    start: usize,
    text: String,
    /// For each byte of `text`, the index of its character in `chars`.
    char_of: Vec<u32>,
    chars: Vec<LitChar>,
    /// Followed by `:`: an object key.
    key: bool,
}

/// Decodes the `\uXXXX` at `body[i..]` (the backslash at `i`).
fn hex4(body: &[u8], i: usize) -> Option<u32> {
    let h = body.get(i + 2..i + 6)?;
    u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
}

/// The string literal opening at `body[start]` (a quote), ending before `limit`; `None` when it
/// does not close on its line (the scan was not at a literal) or is not valid JSON text.
fn literal_at(body: &[u8], start: usize, limit: usize) -> Option<Lit> {
    let mut text = String::new();
    let mut chars = Vec::new();
    let mut char_of = Vec::new();
    let mut j = start + 1;
    loop {
        if j >= limit {
            return None;
        }
        let b = body[j];
        let (c, raw, escaped, other) = match b {
            b'"' => break,
            b'\n' | b'\r' => return None,
            b'\\' => match *body.get(j + 1)? {
                b'u' => {
                    let u = hex4(body, j)?;
                    if (0xD800..0xDC00).contains(&u) {
                        let lo = (body.get(j + 6) == Some(&b'\\')
                            && body.get(j + 7) == Some(&b'u'))
                        .then(|| hex4(body, j + 6))
                        .flatten()?;
                        let c = char::from_u32(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00))?;
                        (c, 12, false, true)
                    } else {
                        (char::from_u32(u)?, 6, true, false)
                    }
                }
                e @ (b'"' | b'\\' | b'/') => (char::from(e), 2, false, true),
                b'b' => ('\u{8}', 2, false, true),
                b'f' => ('\u{c}', 2, false, true),
                b'n' => ('\n', 2, false, true),
                b'r' => ('\r', 2, false, true),
                b't' => ('\t', 2, false, true),
                _ => return None,
            },
            _ => {
                let n = match b {
                    0x00..=0x7F => 1,
                    0xC0..=0xDF => 2,
                    0xE0..=0xEF => 3,
                    _ => 4,
                };
                let s = std::str::from_utf8(body.get(j..j + n)?).ok()?;
                (s.chars().next()?, n, false, false)
            }
        };
        let index = chars.len() as u32;
        chars.push(LitChar {
            c,
            at: j,
            escaped,
            other_escape: other,
        });
        char_of.extend(std::iter::repeat_n(index, c.len_utf8()));
        text.push(c);
        j += raw;
    }
    let end = j + 1;
    let key = body[end..limit]
        .iter()
        .find(|b| !b" \t\r\n".contains(b))
        .is_some_and(|&b| b == b':');
    Some(Lit {
        end,
        start,
        text,
        char_of,
        chars,
        key,
    })
}

/// Every string literal in `body[range]`.
fn literals(body: &[u8], range: std::ops::Range<usize>) -> Vec<Lit> {
    let mut out = Vec::new();
    let mut i = range.start;
    while i < range.end {
        if body[i] == b'"'
            && let Some(l) = literal_at(body, i, range.end)
        {
            i = l.end;
            out.push(l);
            continue;
        }
        i += 1;
    }
    out
}

/// The changed body, written character by character from the original: applying a change twice
/// writes the same bytes, so the rules below may overlap.
struct Edit<'a> {
    body: &'a [u8],
    out: Vec<u8>,
    cipher: &'a Cipher,
}

impl Edit<'_> {
    /// Substitutes one character of a literal where it stands.
    fn put(&mut self, lc: &LitChar) {
        if lc.other_escape {
            return;
        }
        let Some(n) = self.cipher.map(lc.c) else {
            return;
        };
        if lc.escaped {
            let upper = self.body[lc.at + 2..lc.at + 6]
                .iter()
                .any(u8::is_ascii_uppercase);
            let hex = if upper {
                format!("\\u{:04X}", n as u32)
            } else {
                format!("\\u{:04x}", n as u32)
            };
            self.out[lc.at..lc.at + 6].copy_from_slice(hex.as_bytes());
        } else {
            let mut buf = [0u8; 4];
            let s = n.encode_utf8(&mut buf);
            self.out[lc.at..lc.at + s.len()].copy_from_slice(s.as_bytes());
        }
    }

    /// Substitutes the characters of `lit` at the byte offsets of its text where `mask` is set.
    fn put_masked(&mut self, lit: &Lit, mask: &[bool]) {
        for (i, set) in mask.iter().enumerate() {
            if !set {
                continue;
            }
            let Some(&ci) = lit.char_of.get(i) else {
                break;
            };
            if let Some(lc) = lit.chars.get(ci as usize) {
                let lc = *lc;
                self.put(&lc);
            }
        }
    }

    /// Substitutes every character of every value literal inside `span`.
    /// The value of a discriminator key (`"type": …`) is kept.
    fn put_values_in(&mut self, lits: &[Lit], span: &std::ops::Range<usize>) {
        for (n, l) in lits.iter().enumerate() {
            if l.key || l.start < span.start || l.end > span.end {
                continue;
            }
            let under_discriminator = n
                .checked_sub(1)
                .and_then(|p| lits.get(p))
                .is_some_and(|k| k.key && is_discriminator(&k.text));
            if under_discriminator {
                continue;
            }
            for lc in &l.chars {
                self.put(lc);
            }
        }
    }
}

/// The spans in `body[range]` (outside literals) holding a JSON value equal to `target`.
fn value_spans(
    body: &[u8],
    range: &std::ops::Range<usize>,
    lits: &[Lit],
    target: &Value,
) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut li = 0;
    let mut i = range.start;
    while i < range.end {
        while lits.get(li).is_some_and(|l| l.end <= i) {
            li += 1;
        }
        if let Some(l) = lits.get(li)
            && l.start <= i
        {
            i = l.end;
            continue;
        }
        if matches!(body[i], b'{' | b'[') {
            let mut values =
                serde_json::Deserializer::from_slice(&body[i..range.end]).into_iter::<Value>();
            if let Some(Ok(v)) = values.next()
                && json_eq(&v, target)
            {
                let end = i + values.byte_offset();
                spans.push(i..end);
                i = end;
                continue;
            }
        }
        i += 1;
    }
    spans
}

/// The value literals of `body[range]` that hold a JSON event again, base64-encoded
/// (InvokeModel's `chunk` frames: `{"bytes": "<base64>"}`): each decoded is varied by `vary_inner`
/// through an edit of its own, then encoded again in place (the same bytes count, so the same
/// length).
fn base64_payloads(
    body: &[u8],
    range: std::ops::Range<usize>,
    edit: &mut Edit<'_>,
    mut vary_inner: impl FnMut(&mut Edit<'_>, &[u8]),
) {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    for l in literals(body, range) {
        // Escapes (`\/`) would make the raw text longer than the decoded one: left alone.
        if l.key || l.text.len() < 8 || l.end - l.start - 2 != l.text.len() {
            continue;
        }
        let Ok(inner) = b64.decode(l.text.as_bytes()) else {
            continue;
        };
        if inner.first() != Some(&b'{') {
            continue;
        }
        let mut sub = Edit {
            body: &inner,
            out: inner.clone(),
            cipher: edit.cipher,
        };
        vary_inner(&mut sub, &inner);
        if sub.out != inner {
            let encoded = b64.encode(&sub.out);
            if encoded.len() == l.text.len() {
                edit.out[l.start + 1..l.end - 1].copy_from_slice(encoded.as_bytes());
            }
        }
    }
}

/// Where JSON text sits in the body: the whole body for text framings, each frame's payload for
/// binary AWS frames (their headers are binary, and may hold quote bytes).
fn text_regions(body: &[u8], framing: Framing) -> Vec<std::ops::Range<usize>> {
    if framing != Framing::AwsEventStream {
        return std::iter::once(0..body.len()).collect();
    }
    aws_frames(body)
        .into_iter()
        .filter_map(|f| {
            let p = sse_replay_core::aws_eventstream::payload_range(&body[f.clone()])?;
            Some(f.start + p.start..f.start + p.end)
        })
        .collect()
}

/// The frames of a binary AWS event stream: each valid prelude and its length (corrupt stretches
/// skipped a byte at a time, as the decoder resynchronises).
fn aws_frames(body: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut frames = Vec::new();
    let mut o = 0;
    while o + sse_replay_core::aws_eventstream::MIN_FRAME_BYTES <= body.len() {
        let total = u32::from_be_bytes([body[o], body[o + 1], body[o + 2], body[o + 3]]) as usize;
        if sse_replay_core::aws_eventstream::looks_like_aws_eventstream(&body[o..])
            && o + total <= body.len()
        {
            frames.push(o..o + total);
            o += total;
        } else {
            o += 1;
        }
    }
    frames
}

/// Writes the CRC again of every frame whose bytes changed and whose CRC was valid.
fn fix_crcs(original: &[u8], out: &mut [u8]) {
    for f in aws_frames(original) {
        let crc_at = f.end - 4;
        let stored = u32::from_be_bytes([
            original[crc_at],
            original[crc_at + 1],
            original[crc_at + 2],
            original[crc_at + 3],
        ]);
        let valid = sse_replay_core::aws_eventstream::crc32(&original[f.start..crc_at]) == stored;
        if valid && out[f.clone()] != original[f.clone()] {
            let crc = sse_replay_core::aws_eventstream::crc32(&out[f.start..crc_at]);
            out[crc_at..f.end].copy_from_slice(&crc.to_be_bytes());
        }
    }
}

/// Changes the values of `rec` (whose analysis is `base`) with the substitution of `seed`, and
/// checks the change (see the module documentation).
pub fn vary(rec: &Recording, base: &Analysis, seed: u64) -> Variation {
    let unchanged = |why: String| Variation {
        recording: rec.clone(),
        bits: 0.0,
        failure: Some(why),
    };
    let body = &base.body;
    if body.len() as u64 != rec.body_len() {
        return unchanged("its analysis does not hold the whole body".into());
    }
    let cipher = Cipher::new(seed);
    let calls: Vec<&sse_replay_core::accumulate::Call> = base.client_calls().collect();
    // Each call of the table as its place among the client calls (server tools: none).
    let client_index: Vec<Option<usize>> = base
        .calls
        .iter()
        .map(|b| calls.iter().position(|c| std::ptr::eq(*c, b)))
        .collect();
    let masks: Vec<Vec<bool>> = calls
        .iter()
        .map(|c| value_mask(&c.raw_arguments, c.text_input))
        .collect();
    let ids: Vec<(&str, Vec<bool>)> = calls
        .iter()
        .filter_map(|c| c.id.as_deref())
        .map(|id| (id, id_mask(id)))
        .filter(|(_, m)| m.iter().any(|&b| b))
        .collect();
    // Arguments the stream may repeat whole (as a string or as a JSON value).
    let whole_text: Vec<(usize, &str)> = calls
        .iter()
        .enumerate()
        .filter(|(i, c)| c.raw_arguments.len() >= 4 && masks[*i].iter().any(|&b| b))
        .map(|(i, c)| (i, c.raw_arguments.as_str()))
        .collect();
    let whole_values: Vec<&Value> = calls
        .iter()
        .filter_map(|c| c.value())
        .filter(|v| match v {
            Value::Object(o) => !o.is_empty(),
            Value::Array(a) => !a.is_empty(),
            _ => false,
        })
        .collect();
    // String values of the arguments the stream may repeat on their own (a diff's `.done`).
    let mut whole_strings: Vec<String> = Vec::new();
    for v in &whole_values {
        string_values(v, &mut whole_strings);
    }
    whole_strings.retain(|s| s.chars().count() >= 8);
    let mut edit = Edit {
        body,
        out: body.clone(),
        cipher: &cipher,
    };
    let regions = text_regions(body, base.framing);
    let mut unmatched = 0usize;
    // Client calls whose whole arguments object is found in no event.
    let mut assembled: Vec<usize> = Vec::new();
    // Every rule on `body[s..e]`, a part of `event`, written through `edit`.
    let apply = |edit: &mut Edit<'_>,
                 body: &[u8],
                 s: usize,
                 e: usize,
                 event: &sse_replay_core::pipeline::EventRecord,
                 assembled: &mut Vec<usize>,
                 unmatched: &mut usize| {
        let lits = literals(body, s..e);
        for l in &lits {
            if let Some((_, m)) = ids.iter().find(|(id, _)| *id == l.text) {
                edit.put_masked(l, m);
            }
            if !l.key
                && let Some((i, _)) = whole_text.iter().find(|(_, t)| *t == l.text)
            {
                edit.put_masked(l, &masks[*i]);
            }
            if !l.key && whole_strings.contains(&l.text) {
                for lc in &l.chars {
                    edit.put(lc);
                }
            }
        }
        for target in &whole_values {
            for span in value_spans(body, &(s..e), &lits, target) {
                edit.put_values_in(&lits, &span);
            }
        }
        // The event's own fragments, where they sit in it.
        let first = event.first_fragment as usize;
        for f in base
            .fragments
            .iter()
            .skip(first)
            .take(event.fragment_count as usize)
        {
            let Some(&Some(ci)) = client_index.get(f.call as usize) else {
                continue;
            };
            let range = f.args_range.start as usize..f.args_range.end as usize;
            if !f.has_args || range.is_empty() {
                continue;
            }
            let text = base.fragment_text(f);
            if f.object_args {
                match serde_json::from_str::<Value>(text) {
                    Ok(target) => {
                        let spans = value_spans(body, &(s..e), &lits, &target);
                        if spans.is_empty() {
                            assembled.push(ci);
                        }
                        for span in spans {
                            edit.put_values_in(&lits, &span);
                        }
                    }
                    Err(_) => *unmatched += 1,
                }
                continue;
            }
            let mask = &masks[ci][range.clone()];
            let mut found = false;
            for l in lits.iter().filter(|l| !l.key && l.text == text) {
                edit.put_masked(l, mask);
                found = true;
            }
            if !found {
                // The fragment is the JSON-escaped form of the literal (a diff streamed into
                // a string of the arguments): walk the escaping.
                for l in lits.iter().filter(|l| !l.key) {
                    if escaped_inner(&l.text) != text {
                        continue;
                    }
                    found = true;
                    let mut t_off = 0;
                    for lc in &l.chars {
                        let esc = escaped_inner(lc.c.encode_utf8(&mut [0u8; 4]));
                        if esc.len() == lc.c.len_utf8() && mask.get(t_off) == Some(&true) {
                            edit.put(lc);
                        }
                        t_off += esc.len();
                    }
                }
            }
            if !found {
                // The dialect built the fragment around the literal (Gemini's `partialArgs`:
                // a `stringValue` becomes `{"location":"Bost`): the literal's escaped text,
                // found once inside the fragment's, is that part of it.
                for l in lits.iter().filter(|l| !l.key && !l.text.is_empty()) {
                    let esc = escaped_inner(&l.text);
                    let mut at = text.match_indices(esc.as_str()).map(|(i, _)| i);
                    let (Some(k), None) = (at.next(), at.next()) else {
                        continue;
                    };
                    found = true;
                    let mut t_off = k;
                    for lc in &l.chars {
                        let e = escaped_inner(lc.c.encode_utf8(&mut [0u8; 4]));
                        if e.len() == lc.c.len_utf8() && mask.get(t_off) == Some(&true) {
                            edit.put(lc);
                        }
                        t_off += e.len();
                    }
                }
            }
            if !found && mask.iter().any(|&b| b) {
                *unmatched += 1;
            }
        }
    };
    for event in &base.events {
        let (es, ee) = (event.span.start as usize, event.span.end as usize);
        for region in &regions {
            let (s, e) = (es.max(region.start), ee.min(region.end).min(body.len()));
            if s >= e {
                continue;
            }
            apply(&mut edit, body, s, e, event, &mut assembled, &mut unmatched);
            if base.framing == Framing::AwsEventStream {
                base64_payloads(body, s..e, &mut edit, |sub, inner| {
                    apply(
                        sub,
                        inner,
                        0,
                        inner.len(),
                        event,
                        &mut assembled,
                        &mut unmatched,
                    );
                });
            }
        }
    }
    // Arguments the dialect assembled from pieces that are not JSON text (Gemini's
    // `partialArgs`: one `stringValue` per event, the object built at the end): in the events
    // that carry the call's fragments, every value literal that is part of one of its string
    // values is such a piece.
    assembled.sort_unstable();
    assembled.dedup();
    for &ci in &assembled {
        let mut strings = Vec::new();
        if let Some(v) = calls[ci].value() {
            string_values(v, &mut strings);
        }
        let mut pieces = 0usize;
        for event in &base.events {
            let first = event.first_fragment as usize;
            let carries = base
                .fragments
                .iter()
                .skip(first)
                .take(event.fragment_count as usize)
                .any(|f| client_index.get(f.call as usize) == Some(&Some(ci)));
            if !carries {
                continue;
            }
            let (es, ee) = (event.span.start as usize, event.span.end as usize);
            for region in &regions {
                let (s, e) = (es.max(region.start), ee.min(region.end).min(body.len()));
                if s >= e {
                    continue;
                }
                for l in literals(body, s..e) {
                    if !l.key
                        && !l.text.is_empty()
                        && strings.iter().any(|v| v.contains(l.text.as_str()))
                    {
                        pieces += 1;
                        for lc in &l.chars {
                            edit.put(lc);
                        }
                    }
                }
            }
        }
        if pieces == 0 {
            unmatched += 1;
        }
    }
    let mut out = edit.out;
    if out == *body {
        // Nothing to change, or nothing found where it could be changed.
        return if holds_values(&Expected::from_analysis(base)) {
            unchanged("none of its ids and string values was found in the body (an encoding of its payloads this harness does not read)".into())
        } else {
            Variation {
                recording: rec.clone(),
                bits: 0.0,
                failure: None,
            }
        };
    }
    if base.framing == Framing::AwsEventStream {
        fix_crcs(body, &mut out);
    }
    // The same reads, the same times.
    let mut chunks = Vec::with_capacity(rec.chunks.len());
    let mut at = 0;
    for c in &rec.chunks {
        let n = c.bytes.len();
        chunks.push(Chunk {
            t_micros: c.t_micros,
            bytes: out[at..at + n].to_vec(),
        });
        at += n;
    }
    let truth = rec
        .truth
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let free = calls
                .iter()
                .find(|c| c.position as usize == i)
                .is_some_and(|c| c.text_input);
            let mut t = t.clone();
            t.arguments = cipher.apply(&t.arguments, &value_mask(&t.arguments, free));
            t.id = cipher.apply(&t.id, &id_mask(&t.id));
            t
        })
        .collect();
    let varied = Recording {
        chunks,
        truth,
        ..rec.clone()
    };
    match check(base, &varied) {
        Ok(bits) => Variation {
            recording: varied,
            bits,
            failure: None,
        },
        Err(why) if unmatched > 0 => unchanged(format!(
            "{why} ({} not found in its event)",
            sse_replay_core::text::plural(unmatched, "fragment")
        )),
        Err(why) => unchanged(why),
    }
}

/// Every string value in `v` (not the keys, not a discriminator key's value).
fn string_values(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| string_values(x, out)),
        Value::Object(o) => o
            .iter()
            .filter(|(k, x)| !(is_discriminator(k) && x.is_string()))
            .for_each(|(_, x)| string_values(x, out)),
        _ => {}
    }
}

/// `s` as it stands inside a JSON string, without the quotes.
fn escaped_inner(s: &str) -> String {
    let q = serde_json::to_string(s).unwrap_or_default();
    q.get(1..q.len().saturating_sub(1)).unwrap_or("").to_owned()
}

/// Checks the changed recording against the original analysis: the same calls, findings and
/// ending, the values changed. The bits of chance of the changed values, or why not.
fn check(base: &Analysis, varied: &Recording) -> Result<f64, String> {
    let source = SourceInfo {
        name: base.source.name.clone(),
        kind: SourceKind::Recording,
        timing_known: true,
    };
    let opts = Options {
        dialect: Some(base.dialect),
        framing: None,
        detail: true,
    };
    let after = Analysis::from_recording(varied, source, opts);
    let (was, now) = (
        Expected::from_analysis(base),
        Expected::from_analysis(&after),
    );
    if was.calls.len() != now.calls.len() {
        return Err(format!(
            "the varied stream gives {} instead of {}",
            sse_replay_core::text::plural(now.calls.len(), "call"),
            was.calls.len()
        ));
    }
    let labels = |a: &Analysis| {
        let mut v: Vec<&str> = a.findings.iter().map(|f| f.kind.label()).collect();
        v.sort_unstable();
        v
    };
    if labels(base) != labels(&after) {
        return Err(format!(
            "the varied stream raises other findings ({} instead of {})",
            labels(&after).join(", "),
            labels(base).join(", ")
        ));
    }
    if std::mem::discriminant(&base.ending) != std::mem::discriminant(&after.ending) {
        return Err("the varied stream does not end the same way".into());
    }
    let mut changed: Vec<char> = Vec::new();
    for (i, ((a, sa), (b, sb))) in was.calls.iter().zip(&now.calls).enumerate() {
        if a.name != b.name || sa != sb {
            return Err(format!("call {i} changed its name or status"));
        }
        same_shape(a, b, &mut changed).map_err(|why| format!("call {i}: {why}"))?;
    }
    changed.sort_unstable();
    changed.dedup();
    Ok(changed.iter().map(|&c| Cipher::bits(c)).sum())
}

/// Whether the calls hold an id or a string value the substitution would change.
fn holds_values(expected: &Expected) -> bool {
    expected.calls.iter().any(|(c, _)| {
        let mut strings = Vec::new();
        string_values(&c.arguments.to_json(), &mut strings);
        c.id.as_deref()
            .is_some_and(|id| id_mask(id).contains(&true))
            || strings
                .iter()
                .any(|s| s.chars().any(|ch| Cipher::class(ch).is_some()))
    })
}

/// The two calls differ only in the characters of their ids and string values (pushed to
/// `changed`: the original characters that changed).
fn same_shape(a: &CaseCall, b: &CaseCall, changed: &mut Vec<char>) -> Result<(), String> {
    let mut diff = |x: &str, y: &str| -> Result<(), String> {
        if x.chars().count() != y.chars().count() {
            return Err("a value changed its length".into());
        }
        changed.extend(
            x.chars()
                .zip(y.chars())
                .filter(|(p, q)| p != q)
                .map(|(p, _)| p),
        );
        Ok(())
    };
    match (&a.id, &b.id) {
        (Some(x), Some(y)) => diff(x, y)?,
        (None, None) => {}
        _ => return Err("an id appeared or went away".into()),
    }
    match (&a.arguments, &b.arguments) {
        (Args::Value(x), Args::Value(y)) => value_shape(x, y, &mut diff),
        (Args::Raw(x), Args::Raw(y)) | (Args::Text(x), Args::Text(y)) => diff(x, y),
        _ => Err("its arguments changed kind".into()),
    }
}

fn value_shape(
    a: &Value,
    b: &Value,
    diff: &mut impl FnMut(&str, &str) -> Result<(), String>,
) -> Result<(), String> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => diff(x, y),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .try_for_each(|(p, q)| value_shape(p, q, diff)),
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
            x.iter().try_for_each(|(k, p)| match y.get(k) {
                Some(q) => value_shape(p, q, diff),
                None => Err(format!("the key {k:?} changed")),
            })
        }
        _ if json_eq(a, b) => Ok(()),
        _ => Err("a value other than a string changed".into()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_cipher_maps_each_class_into_itself_with_no_fixed_point() {
        for seed in 0..50 {
            let c = Cipher::new(seed);
            for ch in ('a'..='z').chain('A'..='Z').chain('0'..='9') {
                let n = c.map(ch).unwrap();
                assert_ne!(n, ch);
                assert_eq!(
                    Cipher::class(n).map(|k| k.first),
                    Cipher::class(ch).map(|k| k.first)
                );
            }
            for ch in ['深', '圳', 'я', 'А', 'あ', '啊', '匝'] {
                let n = c.map(ch).unwrap();
                assert_ne!(n, ch);
                assert_eq!(n.len_utf8(), ch.len_utf8());
            }
            // A CJK character becomes a common one (drawable by any CJK font).
            assert!(COMMON_HANZI.contains(c.map('深').unwrap()));
            assert_eq!(c.map('_'), None);
            assert_eq!(c.map('é'), None);
        }
    }

    /// The characters of the JSON text `t` that [`value_mask`] lets vary, in order.
    fn masked(t: &str) -> String {
        let m = value_mask(t, false);
        t.char_indices()
            .filter(|(i, _)| m[*i])
            .map(|(_, c)| c)
            .collect()
    }

    #[test]
    fn a_discriminators_value_is_never_varied() {
        let t = r#"{"type":"create_file","path":"a.py","nested":{"type":"x","v":"Q"}}"#;
        assert_eq!(masked(t), "apyQ");
        let mut out = Vec::new();
        string_values(&serde_json::from_str(t).unwrap(), &mut out);
        assert_eq!(out, ["a.py", "Q"]);
    }

    /// An apply_patch operation keeps its `type` (`create_file`): an SDK's schema accepts only
    /// the operation names it knows, and rejecting a made-up one is right, not a client defect.
    #[test]
    fn an_apply_patch_operation_keeps_its_type() {
        let (suite, _) = crate::harness::builtin_suite();
        let r = suite
            .iter()
            .find(|r| r.name.contains("apply-patch"))
            .expect("the apply-patch recording is in the suite");
        let count = |b: &[u8]| String::from_utf8_lossy(b).matches("create_file").count();
        let before = count(&r.recording.body());
        assert!(before > 0);
        for seed in [1, 7, 11] {
            let v = vary(&r.recording, &r.base, seed);
            assert_eq!(v.unproven(), None);
            assert_eq!(count(&v.recording.body()), before, "seed {seed}");
            assert_ne!(v.recording.body(), r.recording.body());
        }
    }

    #[test]
    fn the_mask_holds_string_values_not_keys_escapes_or_numbers() {
        let t = r#"{"city":"Ab","n":12,"l":["x\ny",{"k":"Z"}],"u":"\u00e9q"}"#;
        assert_eq!(masked(t), "AbxyZq");
        // Truncated inside a value.
        let m = value_mask(r#"{"city":"Shen"#, false);
        assert_eq!(m.iter().filter(|&&b| b).count(), 4);
        // Free text: every letter and digit.
        assert_eq!(
            value_mask("SELECT * FROM t", true)
                .iter()
                .filter(|&&b| b)
                .count(),
            11
        );
    }

    #[test]
    fn literals_decode_escapes_and_know_keys() {
        let body = br#"data: {"a":"x\"\u00e9\u4E00y","b":"\n"}"#;
        let lits = literals(body, 0..body.len());
        let texts: Vec<&str> = lits.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["a", "x\"é一y", "b", "\n"]);
        assert!(lits[0].key && !lits[1].key);
        assert!(lits[1].chars[3].escaped);
    }

    #[test]
    fn ids_keep_their_prefix_and_short_ids_stay() {
        let m = id_mask("call_abc123");
        assert_eq!(m.iter().filter(|&&b| b).count(), 6);
        assert!(!m[0]);
        assert!(id_mask("1").iter().all(|&b| !b));
        assert_eq!(id_mask("call_1").iter().filter(|&&b| b).count(), 5);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod suite_tests {
    use super::*;
    use crate::harness::variants;

    /// A recording whose calls sit in base64 payloads (InvokeModel's `chunk` frames: the model's
    /// event base64-encoded in a binary frame) is varied inside them, frames and CRCs intact.
    #[test]
    fn an_invoke_model_stream_is_varied_inside_its_base64_payloads() {
        let spec = sse_replay_core::stub::StubSpec {
            dialect: sse_replay_core::dialect::DialectKind::AnthropicMessages,
            invoke_model_stream: true,
            calls: vec![sse_replay_core::stub::StubCall {
                id: "toolu_01ABCDEFG".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris"}"#.into(),
            }],
            fragment_chars: vec![5],
            ..Default::default()
        };
        let rec = sse_replay_core::stub::build(&spec);
        let r = crate::harness::SuiteRecording::new("invoke".into(), rec, None);
        assert_eq!(r.base.client_calls().count(), 1);
        let v = vary(&r.recording, &r.base, 3);
        assert_eq!(v.unproven(), None);
        assert_eq!(v.recording.body().len(), r.recording.body().len());
        let after = Expected::from_analysis(&Analysis::from_recording(
            &v.recording,
            SourceInfo::default(),
            Options::default(),
        ));
        let id = after.calls[0].0.id.clone().unwrap();
        assert!(id.starts_with("toolu_") && id != "toolu_01ABCDEFG", "{id}");
        assert_ne!(after.calls[0].0.arguments.to_json()["city"], "Paris");
    }

    /// Whether a call holds an id or a string to vary.
    fn has_values(e: &Expected) -> bool {
        e.calls.iter().any(|(c, _)| {
            let mut strings = Vec::new();
            string_values(&c.arguments.to_json(), &mut strings);
            c.id.is_some() || strings.iter().any(|s| !s.is_empty())
        })
    }

    /// Every bundled recording is varied: the same calls, findings and ending, values changed
    /// enough to be proof, the body the same length with the same reads; the same seed gives
    /// the same bytes, another seed other values.
    #[test]
    fn every_bundled_recording_is_varied() {
        let (suite, _) = crate::harness::builtin_suite();
        let mut bad = Vec::new();
        for r in &suite {
            let v = vary(&r.recording, &r.base, 7);
            if let Some(why) = v.unproven() {
                bad.push(format!("{}: {why}", r.name));
                continue;
            }
            let sizes =
                |rec: &Recording| rec.chunks.iter().map(|c| c.bytes.len()).collect::<Vec<_>>();
            assert_eq!(sizes(&v.recording), sizes(&r.recording), "{}", r.name);
            assert_ne!(v.recording.body(), r.recording.body(), "{}", r.name);
            assert_eq!(vary(&r.recording, &r.base, 7).recording, v.recording);
            assert_ne!(vary(&r.recording, &r.base, 8).recording, v.recording);
            // Each case of it says what the recording says: a clean stream stays clean (its
            // ground truth varied with it), a broken one breaks the same way.
            for variant in [
                Variant::OneRead,
                Variant::Keepalive,
                Variant::Cut,
                Variant::NoTerminator,
            ] {
                let Some((wire, _)) = r.case_wire(variant, 7) else {
                    continue;
                };
                let was = variants::wire(variant, &r.recording, &r.base, 7).unwrap();
                let (a, b) = (
                    crate::harness::CaseContext::new(r, variant, 7),
                    Analysis::from_recording(
                        &was.to_recording(&r.recording),
                        SourceInfo::default(),
                        Options {
                            dialect: Some(r.base.dialect),
                            framing: None,
                            detail: true,
                        },
                    ),
                );
                assert_eq!(wire, a.wire);
                let before = Expected::from_analysis(&b);
                assert_eq!(
                    a.expected.problems,
                    before.problems,
                    "{} × {}",
                    r.name,
                    variant.name()
                );
                assert_eq!(a.expected.failure_allowed(), before.failure_allowed());
                if has_values(&before) {
                    assert_ne!(a.expected, before, "{} × {}", r.name, variant.name());
                }
            }
        }
        assert!(bad.is_empty(), "{bad:#?}");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod capture_tests {
    use super::*;

    /// Real provider captures (raw bodies and imports, not built from specs) are varied too:
    /// Responses client items (custom tools, apply_patch, local shell), Bedrock JSON streams,
    /// Cohere, Assistants, Gemini arrays.
    #[test]
    fn real_captures_are_varied() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
        let dirs = [
            "responses-items",
            "bedrock/json",
            "cohere-v2",
            "assistants",
            "gemini-array",
        ];
        let paths: Vec<std::path::PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
        let (suite, _) = crate::harness::load_paths(&paths);
        assert!(suite.len() >= 10, "{}", suite.len());
        let mut bad = Vec::new();
        for r in suite.iter().filter(|r| r.base.client_calls().count() > 0) {
            let v = vary(&r.recording, &r.base, 11);
            if let Some(why) = v.unproven() {
                bad.push(format!("{}: {why}", r.name));
            }
        }
        assert!(bad.is_empty(), "{bad:#?}");
    }
}
