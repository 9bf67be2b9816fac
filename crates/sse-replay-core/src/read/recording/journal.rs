//! The recorder's crash-safe journal: a line-per-record `<out>.partial` file, and its salvage.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::error::{RecordingError, error_position};
use super::write::{OutputFile, WriteOptions, sync_parent_dir, with_suffix};
use super::{
    Chunk, FORMAT_VERSION, Meta, Recording, RequestInfo, ResponseInfo, TruthCall, ron_options,
};

/// The first line of a recorder journal (see [`JournalWriter`]).
pub const JOURNAL_MAGIC: &str = "# sse-replay journal v1";

/// Everything before the journal format number in [`JOURNAL_MAGIC`].
pub const JOURNAL_MAGIC_PREFIX: &str = "# sse-replay journal v";

/// The journal format version this build writes and reads.
pub(super) const JOURNAL_VERSION: u64 = 1;

/// Buffered journal records are handed to the OS at append time when this much time passed since
/// they last were (a killed process loses nothing the OS holds).
pub(super) const JOURNAL_WRITE_OUT_INTERVAL: Duration = Duration::from_millis(50);

/// The head of a recording as the journal stores it (everything but the chunks).
#[derive(Serialize, Deserialize)]
#[serde(default)]
pub(super) struct JournalHead {
    version: u32,
    meta: Meta,
    request: Option<RequestInfo>,
    response: Option<ResponseInfo>,
    truth: Vec<TruthCall>,
}

impl Default for JournalHead {
    fn default() -> Self {
        Self {
            version: FORMAT_VERSION,
            meta: Meta::default(),
            request: None,
            response: None,
            truth: Vec::new(),
        }
    }
}

/// One journal line after the magic line: `Head((..))`, `Response((..))` or `Chunk((..))`, written
/// with the non-pretty serializer (strings escaped), so a record never spans lines.
#[derive(Deserialize)]
pub(super) enum JournalLine {
    Head(Box<JournalHead>),
    Response(ResponseInfo),
    Chunk(Chunk),
}

/// The written form of [`JournalLine`] (borrowed, same RON).
#[derive(Serialize)]
#[serde(rename = "JournalLine")]
pub(super) enum JournalLineRef<'a> {
    Head(&'a JournalHead),
    Response(&'a ResponseInfo),
    Chunk(&'a Chunk),
}

/// Writes a recording as it arrives, so a killed recorder leaves something [`load`](super::load) can salvage.
///
/// The journal `<final_path>.partial` starts with [`JOURNAL_MAGIC`], then one RON record per line.
/// Appends are buffered. They reach the OS (safe from a killed process) on
/// [`JournalWriter::write_out`], and automatically when an append comes ≥ 50 ms after the last
/// write-out; they reach the disk (`sync_data`, safe from a machine crash) on
/// [`JournalWriter::flush`], or through [`JournalWriter::sync_handle`] from another thread, so a
/// slow disk does not hold up the writer. [`JournalWriter::finish`]
/// writes the final document atomically and removes the journal. Dropping the writer without
/// finishing flushes the buffer (without syncing) and leaves the journal in place.
#[derive(Debug)]
pub struct JournalWriter {
    final_path: PathBuf,
    /// Whether [`JournalWriter::finish`] may replace an existing final file (`--force`).
    overwrite: bool,
    journal_path: PathBuf,
    out: BufWriter<File>,
    last_flush: Instant,
    chunks: u64,
    /// A spool ([`JournalWriter::spool`]): an unnamed temporary file, not a `.partial`.
    spool: bool,
}

impl JournalWriter {
    /// Creates `<final_path>.partial` (failing with [`RecordingError::JournalExists`] if an earlier
    /// interrupted recording left one) and durably writes the magic line and `head`'s meta,
    /// request, response and truth. `head.chunks` is ignored. [`JournalWriter::finish`] will not
    /// replace an existing final file (see [`JournalWriter::create_with`]).
    pub fn create(final_path: &Path, head: &Recording) -> Result<Self, RecordingError> {
        Self::create_with(final_path, head, false)
    }

    /// [`JournalWriter::create`]; with `overwrite`, `finish` may replace an existing final file.
    ///
    /// The journal's name is predictable on purpose (users look for it after a crash), so it is
    /// created with `O_CREAT|O_EXCL` (`create_new`): a file or a symlink planted at that name is
    /// refused, never followed. It is `0600`: it holds the request.
    pub fn create_with(
        final_path: &Path,
        head: &Recording,
        overwrite: bool,
    ) -> Result<Self, RecordingError> {
        let journal_path = with_suffix(final_path, ".partial");
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let file = options.open(&journal_path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                RecordingError::JournalExists {
                    path: journal_path.clone(),
                }
            } else {
                RecordingError::io("creating", &journal_path, e)
            }
        })?;
        let mut writer = Self {
            final_path: final_path.to_path_buf(),
            overwrite,
            journal_path,
            out: BufWriter::new(file),
            last_flush: Instant::now(),
            chunks: 0,
            spool: false,
        };
        writer.start(head)?;
        sync_parent_dir(&writer.journal_path);
        Ok(writer)
    }

    /// A journal in an unnamed temporary file (gone with the process, whatever happens), for a
    /// recording that goes to standard output, a device or a FIFO: it holds the chunks on disk
    /// until the document is written there, so memory does not grow with the stream.
    pub fn spool(head: &Recording) -> Result<Self, RecordingError> {
        let journal_path = PathBuf::from("(temporary spool file)");
        let file = tempfile::tempfile()
            .map_err(|e| RecordingError::io("creating a spool file for", &journal_path, e))?;
        let mut writer = Self {
            final_path: PathBuf::new(),
            overwrite: false,
            journal_path,
            out: BufWriter::new(file),
            last_flush: Instant::now(),
            chunks: 0,
            spool: true,
        };
        writer.start(head)?;
        Ok(writer)
    }

    /// The magic line and the head, synced.
    fn start(&mut self, head: &Recording) -> Result<(), RecordingError> {
        let writer = self;
        writer.write_raw_line(JOURNAL_MAGIC)?;
        let head = JournalHead {
            version: FORMAT_VERSION,
            meta: head.meta.clone(),
            request: head.request.clone(),
            response: head.response.clone(),
            truth: head.truth.clone(),
        };
        writer.write_record(&JournalLineRef::Head(&head))?;
        writer.flush()
    }

    /// The journal file (`<final_path>.partial`).
    pub fn journal_path(&self) -> &Path {
        &self.journal_path
    }

    /// Where [`JournalWriter::finish`] will write the recording.
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Whether [`JournalWriter::finish`] may replace an existing final file.
    pub fn overwrite(&self) -> bool {
        self.overwrite
    }

    /// Number of chunks appended so far.
    pub fn chunk_count(&self) -> u64 {
        self.chunks
    }

    /// Records the response head (status, headers) once known; the last one wins on salvage.
    pub fn set_response(&mut self, resp: &ResponseInfo) -> Result<(), RecordingError> {
        self.write_record(&JournalLineRef::Response(resp))?;
        self.flush()
    }

    /// Appends one chunk (buffered; written out when ≥ 50 ms passed since the last write-out).
    pub fn append_chunk(&mut self, chunk: &Chunk) -> Result<(), RecordingError> {
        self.write_record(&JournalLineRef::Chunk(chunk))?;
        self.chunks += 1;
        if self.last_flush.elapsed() >= JOURNAL_WRITE_OUT_INTERVAL {
            self.write_out()?;
        }
        Ok(())
    }

    /// Hands the buffered records to the OS without waiting for the disk: one `write` call; after
    /// it a killed process loses none of them (a machine crash still can, until a sync).
    pub fn write_out(&mut self) -> Result<(), RecordingError> {
        self.out
            .flush()
            .map_err(|e| RecordingError::io("writing", &self.journal_path, e))?;
        self.last_flush = Instant::now();
        Ok(())
    }

    /// A second handle on the journal file, to `sync_data` it from another thread while this one
    /// keeps writing.
    pub fn sync_handle(&self) -> Result<File, RecordingError> {
        self.out
            .get_ref()
            .try_clone()
            .map_err(|e| RecordingError::io("opening a sync handle on", &self.journal_path, e))
    }

    /// Writes the buffer out and syncs the file data to disk.
    pub fn flush(&mut self) -> Result<(), RecordingError> {
        self.out
            .flush()
            .map_err(|e| RecordingError::io("writing", &self.journal_path, e))?;
        self.out
            .get_ref()
            .sync_data()
            .map_err(|e| RecordingError::io("syncing", &self.journal_path, e))?;
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Writes the recording's document to `out`: `head`'s fields (its chunks are ignored) and
    /// every chunk the journal holds, read back from the journal file one line at a time, so a
    /// long recording is never held in memory ([`super::DocumentWriter`]).
    pub fn write_document(
        &mut self,
        head: &Recording,
        out: &mut dyn Write,
    ) -> Result<(), RecordingError> {
        use std::io::{BufRead as _, Seek as _};
        self.out
            .flush()
            .map_err(|e| RecordingError::io("writing", &self.journal_path, e))?;
        let read_err = |e| RecordingError::io("reading back", &self.journal_path, e);
        let file = if self.spool {
            // The clone shares the offset: nothing is appended after this.
            let mut f = self.out.get_ref().try_clone().map_err(read_err)?;
            f.seek(std::io::SeekFrom::Start(0)).map_err(read_err)?;
            f
        } else {
            File::open(&self.journal_path).map_err(read_err)?
        };
        let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
        let mut doc = super::DocumentWriter::new(head)?;
        let options = ron_options();
        let mut line = Vec::new();
        let mut line_no = 0usize;
        let write_err = |e| RecordingError::io("writing the recording for", &self.final_path, e);
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).map_err(read_err)? == 0 {
                break;
            }
            line_no += 1;
            if !line.starts_with(b"Chunk(") {
                continue;
            }
            let text = std::str::from_utf8(&line).map_err(|_| RecordingError::BadJournal {
                path: Some(self.journal_path.clone()),
                line: line_no,
                message: "a chunk record is not UTF-8".into(),
            })?;
            match options.from_str::<JournalLine>(text.trim_end()) {
                Ok(JournalLine::Chunk(chunk)) => doc.chunk(out, &chunk).map_err(write_err)?,
                Ok(_) => {}
                Err(err) => {
                    return Err(RecordingError::syntax(text, &err, line_no - 1)
                        .with_path(&self.journal_path));
                }
            }
        }
        doc.finish(out).map_err(write_err)
    }

    /// Saves the recording atomically to the final path (see [`OutputFile`]; an existing file is
    /// replaced only when the writer was created with `overwrite`): `rec`'s fields and the
    /// journal's chunks (`rec.chunks` is ignored: see [`JournalWriter::write_document`]), then
    /// removes the journal. Returns the final path. On error the journal is left in place.
    pub fn finish(mut self, rec: &Recording) -> Result<PathBuf, RecordingError> {
        let mut out = OutputFile::create(&self.final_path, WriteOptions::private(self.overwrite))?;
        self.write_document(rec, &mut out)?;
        out.commit()?;
        let Self {
            final_path,
            journal_path,
            out,
            ..
        } = self;
        drop(out);
        fs::remove_file(&journal_path)
            .map_err(|e| RecordingError::io("removing the journal", &journal_path, e))?;
        sync_parent_dir(&final_path);
        Ok(final_path)
    }

    fn write_record(&mut self, line: &JournalLineRef<'_>) -> Result<(), RecordingError> {
        let text = ron_options()
            .to_string(line)
            .map_err(|e| RecordingError::serialize(&e).with_path(&self.journal_path))?;
        debug_assert!(!text.contains('\n'), "journal records are one line");
        self.write_raw_line(&text)
    }

    fn write_raw_line(&mut self, text: &str) -> Result<(), RecordingError> {
        self.out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.write_all(b"\n"))
            .map_err(|e| RecordingError::io("writing", &self.journal_path, e))
    }
}

/// Rebuilds a recording from a journal left by [`JournalWriter`]: the head, the last response
/// record and every complete chunk record. A damaged last line (the recorder was killed while
/// writing it) is dropped. The result has `meta.interrupted = true` and a note
/// `recorder was interrupted: N chunks salvaged`.
pub fn salvage_journal(text: &str) -> Result<Recording, RecordingError> {
    let text = crate::text::strip_bom_str(text);
    let mut lines = text.split('\n').map(|line| line.trim_end_matches('\r'));
    let magic = lines.next().unwrap_or_default();
    let Some(version) = magic.strip_prefix(JOURNAL_MAGIC_PREFIX) else {
        return Err(RecordingError::BadJournal {
            path: None,
            line: 1,
            message: format!("the first line is not `{JOURNAL_MAGIC}`"),
        });
    };
    match version.trim().parse::<u64>() {
        Ok(JOURNAL_VERSION) => {}
        Ok(found) if found > JOURNAL_VERSION => {
            return Err(RecordingError::FutureVersion {
                path: None,
                found,
                supported: JOURNAL_VERSION,
            });
        }
        _ => {
            return Err(RecordingError::BadJournal {
                path: None,
                line: 1,
                message: format!("unknown journal format {version:?}"),
            });
        }
    }

    // Records: (1-based line, text); blank lines (and the NUL padding a power loss can leave) skipped.
    let records: Vec<(usize, &str)> = lines
        .enumerate()
        .map(|(i, line)| (i + 2, line))
        .filter(|(_, line)| {
            !line
                .trim_matches(|c: char| c.is_whitespace() || c == '\0')
                .is_empty()
        })
        .collect();
    let options = ron_options();
    let mut head: Option<JournalHead> = None;
    let mut response: Option<ResponseInfo> = None;
    let mut chunks = Vec::new();
    let mut dropped_last = false;
    for (n, &(line_no, line)) in records.iter().enumerate() {
        let record = match options.from_str::<JournalLine>(line) {
            Ok(record) => record,
            // The head is written and synced before any chunk: a damaged head is damage, not a
            // cut tail, and is reported rather than replaced by defaults.
            Err(err) if n == 0 => {
                let pos = error_position(line, &err.span);
                return Err(RecordingError::BadJournal {
                    path: None,
                    line: line_no,
                    message: format!(
                        "the head record is damaged (column {}: {})",
                        pos.col,
                        super::error::ron_message(&err.code)
                    ),
                });
            }
            Err(_) if n + 1 == records.len() => {
                dropped_last = true;
                break;
            }
            Err(err) => return Err(RecordingError::syntax(line, &err, line_no - 1)),
        };
        match record {
            JournalLine::Head(h) if head.is_none() && n == 0 => {
                if u64::from(h.version) > u64::from(FORMAT_VERSION) {
                    return Err(RecordingError::FutureVersion {
                        path: None,
                        found: u64::from(h.version),
                        supported: u64::from(FORMAT_VERSION),
                    });
                }
                head = Some(*h);
            }
            JournalLine::Head(_) => {
                return Err(RecordingError::BadJournal {
                    path: None,
                    line: line_no,
                    message: "a head record after the first record".into(),
                });
            }
            _ if head.is_none() => {
                return Err(RecordingError::BadJournal {
                    path: None,
                    line: line_no,
                    message: "the first record is not the head".into(),
                });
            }
            JournalLine::Response(r) => response = Some(r),
            JournalLine::Chunk(c) => chunks.push(c),
        }
    }

    let Some(head) = head else {
        return Err(RecordingError::BadJournal {
            path: None,
            line: 2,
            message: "no head record after the first line (nothing was recorded)".into(),
        });
    };
    let JournalHead {
        version: _,
        mut meta,
        request,
        response: head_response,
        truth,
    } = head;
    meta.interrupted = true;
    meta.notes.push(format!(
        "recorder was interrupted: {} salvaged",
        crate::text::plural(chunks.len(), "chunk")
    ));
    if dropped_last {
        meta.notes
            .push("the journal's last record was incomplete and was dropped".into());
    }
    Ok(Recording {
        version: FORMAT_VERSION,
        meta,
        request,
        response: response.or(head_response),
        chunks,
        truth,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::recording::test_support::*;
    use crate::recording::*;

    #[test]
    fn journal_lines_are_single_line_records() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        assert_eq!(w.journal_path(), dir.path().join("out.ron.partial"));
        w.append_chunk(&Chunk {
            t_micros: 5,
            bytes: "a\nb\r\"深\u{2028}".as_bytes().to_vec(),
        })
        .unwrap();
        w.flush().unwrap();
        let text = fs::read_to_string(w.journal_path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], JOURNAL_MAGIC);
        assert!(lines[1].starts_with("Head("), "{}", lines[1]);
        assert!(lines[2].starts_with("Chunk("), "{}", lines[2]);
        assert!(lines[2].contains('深'), "{}", lines[2]);
    }

    #[test]
    fn killed_recorder_is_salvaged() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        let response = ResponseInfo {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
        };
        w.set_response(&response).unwrap();
        let chunks = chunks_of(&["data: 深".as_bytes(), b"\xe5\x9c", b"\xb3\n\n", b"\xff"]);
        for c in &chunks[..3] {
            w.append_chunk(c).unwrap();
        }
        w.flush().unwrap();
        w.append_chunk(&chunks[3]).unwrap(); // buffered only
        let journal = w.journal_path().to_path_buf();
        // SIGKILL: no destructor, the buffered chunk is lost.
        #[allow(clippy::mem_forget, reason = "a killed process runs no destructor")]
        std::mem::forget(w);

        let rec = load(&journal).unwrap();
        assert!(rec.meta.interrupted);
        assert_eq!(rec.chunks, chunks[..3]);
        assert_eq!(rec.response, Some(response.clone()));
        assert_eq!(rec.request, head().request);
        assert_eq!(rec.truth, head().truth);
        assert_eq!(rec.meta.title, head().meta.title);
        assert_eq!(
            rec.meta.notes.last().unwrap(),
            "recorder was interrupted: 3 chunks salvaged"
        );
        assert_eq!(rec.version, FORMAT_VERSION);

        // The same journal under any name is recognised by its first line.
        let renamed = dir.path().join("whatever.txt");
        fs::copy(&journal, &renamed).unwrap();
        assert_eq!(load(&renamed).unwrap().chunks, chunks[..3]);

        // A second recorder refuses to overwrite the interrupted journal.
        let err = JournalWriter::create(&out, &head()).unwrap_err();
        assert!(matches!(err, RecordingError::JournalExists { .. }));
        assert!(
            err.to_string()
                .ends_with(&format!(" in {}", journal.display()))
        );
    }

    #[test]
    fn dropped_writer_keeps_buffered_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        let chunks = chunks_of(&[b"one", b"two"]);
        for c in &chunks {
            w.append_chunk(c).unwrap();
        }
        let journal = w.journal_path().to_path_buf();
        drop(w);
        let rec = load(&journal).unwrap();
        assert_eq!(rec.chunks, chunks);
        assert!(rec.meta.interrupted);
        assert!(!out.exists());
    }

    #[test]
    fn half_written_last_line_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        let chunks = chunks_of(&["深圳 one".as_bytes(), "深圳 two".as_bytes()]);
        for c in &chunks {
            w.append_chunk(c).unwrap();
        }
        w.flush().unwrap();
        let journal = w.journal_path().to_path_buf();
        drop(w);
        let full = fs::read(&journal).unwrap();
        let second_start = full[..full.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap()
            + 1;
        let head_end = full
            .iter()
            .skip(JOURNAL_MAGIC.len() + 1)
            .position(|&b| b == b'\n')
            .unwrap()
            + JOURNAL_MAGIC.len()
            + 2;

        // Cut at every byte of the last record (including inside 深, making the file invalid UTF-8).
        for cut in second_start..full.len() {
            fs::write(&journal, &full[..cut]).unwrap();
            let rec = load(&journal).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
            let expect = if cut + 1 >= full.len() { 2 } else { 1 };
            assert_eq!(rec.chunks, chunks[..expect], "cut {cut}");
            assert!(rec.meta.interrupted);
            assert!(rec.meta.notes.contains(&format!(
                "recorder was interrupted: {} salvaged",
                crate::text::plural(expect, "chunk")
            )));
        }
        // Any cut after the head salvages without error; cuts before it never panic.
        for cut in 0..full.len() {
            let result = Recording::from_bytes(&full[..cut]);
            if cut >= head_end {
                assert!(result.is_ok(), "cut {cut}: {result:?}");
            }
        }
        // Garbage in a middle line is an error with the journal line number.
        let mut text = String::from_utf8(full).unwrap();
        text = text.replacen("Chunk((t_us:0", "Chunk((t_us:zz", 1);
        let err = salvage_journal(&text).unwrap_err();
        assert!(
            matches!(err, RecordingError::Syntax { line: 3, .. }),
            "{err:?}"
        );
        // Power loss padding.
        let padded = format!("{}\0\0\0\0\n", text.replacen("t_us:zz", "t_us:0", 1));
        assert_eq!(salvage_journal(&padded).unwrap().chunks, chunks);
    }

    #[test]
    fn journal_structure_errors() {
        assert!(matches!(
            salvage_journal("# something else\n"),
            Err(RecordingError::BadJournal { line: 1, .. })
        ));
        assert!(matches!(
            salvage_journal("# sse-replay journal v9\nHead(())\n"),
            Err(RecordingError::FutureVersion { found: 9, .. })
        ));
        let err =
            salvage_journal(&format!("{JOURNAL_MAGIC}\nChunk((t_us:1))\nHead(())\n")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid recorder journal at line 2: the first record is not the head"
        );
        let err = salvage_journal(&format!(
            "{JOURNAL_MAGIC}\nHead((version:3))\nChunk((t_us:1))\n"
        ))
        .unwrap_err();
        assert!(matches!(
            err,
            RecordingError::FutureVersion { found: 3, .. }
        ));
        // A damaged head is reported with its line, never replaced by defaults.
        let err = salvage_journal(&format!("{JOURNAL_MAGIC}\nHead((ver")).unwrap_err();
        assert!(
            matches!(err, RecordingError::BadJournal { line: 2, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("head record is damaged"), "{err}");
        let err = salvage_journal(&format!(
            "{JOURNAL_MAGIC}\nHead((meta:(title:5)))\nChunk((t_us:1,text:\"a\"))\n"
        ))
        .unwrap_err();
        assert!(
            matches!(err, RecordingError::BadJournal { line: 2, .. }),
            "{err:?}"
        );
        let err = salvage_journal(&format!("{JOURNAL_MAGIC}\n")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid recorder journal at line 2: no head record after the first line (nothing was recorded)"
        );
    }

    #[test]
    fn finish_writes_the_final_file_and_removes_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        let mut rec = head();
        rec.chunks = chunks_of(&[b"data: 1\n\n", b"data: 2\n\n"]);
        for c in &rec.chunks {
            w.append_chunk(c).unwrap();
        }
        let journal = w.journal_path().to_path_buf();
        let final_path = w.finish(&rec).unwrap();
        assert_eq!(final_path, out);
        assert!(!journal.exists());
        assert_eq!(names_in(dir.path()), ["out.ron"]);
        let loaded = load(&out).unwrap();
        assert_eq!(loaded, rec);
        assert!(!loaded.meta.interrupted);
        // A new recording to the same path works again.
        JournalWriter::create(&out, &head()).unwrap();
    }

    #[test]
    fn an_append_after_the_interval_writes_the_buffer_out() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ron");
        let mut w = JournalWriter::create(&out, &head()).unwrap();
        let on_disk = |w: &JournalWriter| {
            salvage_journal(&fs::read_to_string(w.journal_path()).unwrap())
                .unwrap()
                .chunks
                .len()
        };
        // The clock is the writer's own: set, not waited for, so a slow machine changes nothing.
        // The last write-out just now: an append stays in the buffer.
        w.last_flush = Instant::now() + Duration::from_secs(3600);
        w.append_chunk(&Chunk {
            t_micros: 1,
            bytes: b"a".to_vec(),
        })
        .unwrap();
        assert_eq!(on_disk(&w), 0, "buffered");
        // The interval has passed since: the next append writes both out.
        w.last_flush = Instant::now()
            .checked_sub(JOURNAL_WRITE_OUT_INTERVAL)
            .unwrap();
        w.append_chunk(&Chunk {
            t_micros: 2,
            bytes: b"b".to_vec(),
        })
        .unwrap();
        // Both are on disk without an explicit flush.
        let rec = salvage_journal(&fs::read_to_string(w.journal_path()).unwrap()).unwrap();
        assert_eq!(rec.chunks.len(), 2);
        assert_eq!(w.chunk_count(), 2);
        #[allow(clippy::mem_forget, reason = "a killed process runs no destructor")]
        std::mem::forget(w);
    }
}
