//! The one safe writer: random-named temp file beside the target, fsync, rename; never follows a
//! planted symlink or replaces a non-regular file.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::Recording;
use super::error::RecordingError;

/// `path` with `suffix` appended to its file name: `out.ron` + `.tmp` = `out.ron.tmp`.
pub(super) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Best effort: make a rename or a new file in `path`'s directory durable.
pub(super) fn sync_parent_dir(path: &Path) {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // Opening a directory fails on some platforms (Windows): nothing to do there.
    if let Ok(dir) = File::open(dir) {
        // Best effort: some file systems cannot sync a directory, and the file itself is synced.
        dir.sync_all().ok();
    }
}
/// Who may read a file this program creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileMode {
    /// `0600`: recordings, journals, captures and imports hold other people's requests.
    Private,
    /// `0666` minus the umask, like any other program's output: exports and reports.
    Umask,
}

/// How an output is written (see [`OutputFile`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Replace an existing file (`--force`, or a Save dialog that asked). Without it an existing
    /// file is an error ([`RecordingError::Exists`]).
    pub overwrite: bool,
    pub mode: FileMode,
}

impl WriteOptions {
    /// A recording (`0600`); `overwrite` as given.
    pub const fn private(overwrite: bool) -> Self {
        Self {
            overwrite,
            mode: FileMode::Private,
        }
    }

    /// An export or a report (umask); `overwrite` as given.
    pub const fn public(overwrite: bool) -> Self {
        Self {
            overwrite,
            mode: FileMode::Umask,
        }
    }
}

/// Where an output path leads, decided before anything is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// `-`: standard output.
    Stdout,
    /// An existing character device or FIFO (`/dev/null`, a pipe), or one of the process's own
    /// descriptors by name (`/dev/stdout`, `/dev/fd/3`, `/proc/self/fd/1`): written straight,
    /// never replaced — once the opened descriptor confirms what it is ([`OutputFile::create`]).
    Special,
    /// Nothing there yet.
    New,
    /// A regular file, or a symlink (which is replaced, never followed), that
    /// [`WriteOptions::overwrite`] allows to replace.
    Replace,
}

/// Whether `path` names one of this process's own descriptors (`/dev/stdout`, `/dev/stderr`,
/// `/dev/fd/3`, `/proc/self/fd/1`): what the caller's shell connected, written straight whatever
/// it is (a terminal, a pipe, or the file of a `> out` redirection). Only these names are
/// followed; nothing else under `/dev/` is trusted by name (`/dev/shm` is world-writable).
pub(super) fn is_own_descriptor(path: &Path) -> bool {
    let Some(s) = path.to_str() else {
        return false;
    };
    let fd = |rest: &str| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
    matches!(s, "/dev/stdout" | "/dev/stderr")
        || s.strip_prefix("/dev/fd/").is_some_and(fd)
        || s.strip_prefix("/proc/self/fd/").is_some_and(fd)
}

/// Decides what writing `path` would do: standard output, a straight write into a device or
/// FIFO, a new file, or a replacement (only with `overwrite`). Errors: a directory, or an
/// existing file without `overwrite` ([`RecordingError::Exists`], CLI exit 2). A symlink is a
/// file to replace (never followed), wherever it is — under `/dev/` too.
pub fn output_target(path: &Path, overwrite: bool) -> Result<OutputTarget, RecordingError> {
    if path.as_os_str() == "-" {
        return Ok(OutputTarget::Stdout);
    }
    if is_own_descriptor(path) {
        return Ok(OutputTarget::Special);
    }
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OutputTarget::New),
        Err(e) => return Err(RecordingError::io("inspecting", path, e)),
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(RecordingError::io(
            "writing",
            path,
            std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory"),
        ));
    }
    if is_special_file(&kind) {
        return Ok(OutputTarget::Special);
    }
    if overwrite {
        Ok(OutputTarget::Replace)
    } else {
        Err(RecordingError::Exists {
            path: path.to_path_buf(),
        })
    }
}

#[cfg(unix)]
pub(super) fn is_special_file(kind: &fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    kind.is_char_device() || kind.is_fifo()
}

#[cfg(not(unix))]
pub(super) fn is_special_file(_kind: &fs::FileType) -> bool {
    false
}

/// Temporary files being written, removed by the interrupt handler (see
/// [`remove_pending_temps`]).
pub(super) static PENDING_TEMPS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

pub(super) fn pending_temps() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING_TEMPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes the temporary files of every unfinished [`OutputFile`] (the binary's Ctrl+C / SIGTERM
/// handler calls this before it exits, so an interrupted `export -o` leaves no temporary file).
pub fn remove_pending_temps() {
    for path in pending_temps().drain(..) {
        // Best effort on the way out: a file already gone is what we want anyway.
        fs::remove_file(path).ok();
    }
}

pub(super) enum OutputInner {
    Stdout(BufWriter<std::io::Stdout>),
    Direct(BufWriter<File>),
    Temp(BufWriter<tempfile::NamedTempFile>),
}

/// An output being written: the one safe writer behind every `-o`, `record`, proxy capture,
/// import, export and Save As.
///
/// A new file (or a replacement, with [`WriteOptions::overwrite`]) is written to a temporary file
/// with a random name created with `O_EXCL` in the target's folder (so a symlink planted at any
/// predictable name is never followed), `0600` or umask as asked; [`OutputFile::commit`] syncs it
/// and renames it into place (without `overwrite`, a rename that never replaces a file that
/// appeared meanwhile), then syncs the folder. A crash leaves the old file or the new one, never
/// a mix. Dropping an uncommitted `OutputFile` (an error on the way) removes the temporary file;
/// [`remove_pending_temps`] does the same on Ctrl+C. `-` is standard output, and an
/// existing character device or FIFO is written straight, never replaced.
pub struct OutputFile {
    inner: OutputInner,
    path: PathBuf,
    overwrite: bool,
}

impl fmt::Debug for OutputFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Opens a device, a FIFO or one of the process's own descriptors for writing, and checks what
/// the descriptor is (`fstat`, not the name, which can be swapped): a character device or a
/// FIFO (or, for the process's own descriptors, whatever the caller connected). Symlinks are not
/// followed (`O_NOFOLLOW`) except through the descriptor names. A FIFO is opened without
/// waiting: nobody reading is [`RecordingError::NoReader`] at once, never a hang in `open`.
#[cfg(unix)]
fn open_special(path: &Path) -> Result<File, RecordingError> {
    use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
    let own = is_own_descriptor(path);
    let mut flags = (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits();
    if !own {
        flags |= rustix::fs::OFlags::NOFOLLOW.bits();
    }
    let file = OpenOptions::new()
        .append(true)
        .custom_flags(flags as i32)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) {
                RecordingError::NoReader {
                    path: path.to_path_buf(),
                }
            } else if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
                RecordingError::NotSpecial {
                    path: path.to_path_buf(),
                }
            } else {
                RecordingError::io("opening", path, e)
            }
        })?;
    let kind = file
        .metadata()
        .map_err(|e| RecordingError::io("inspecting", path, e))?
        .file_type();
    let special = kind.is_char_device() || kind.is_fifo() || kind.is_socket();
    if !(special || own && !kind.is_dir()) {
        return Err(RecordingError::NotSpecial {
            path: path.to_path_buf(),
        });
    }
    // Written with ordinary, blocking writes.
    let flags = rustix::fs::fcntl_getfl(&file).map_err(|e| {
        RecordingError::io(
            "opening",
            path,
            std::io::Error::from_raw_os_error(e.raw_os_error()),
        )
    })?;
    rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK).map_err(|e| {
        RecordingError::io(
            "opening",
            path,
            std::io::Error::from_raw_os_error(e.raw_os_error()),
        )
    })?;
    Ok(file)
}

#[cfg(not(unix))]
fn open_special(path: &Path) -> Result<File, RecordingError> {
    OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| RecordingError::io("opening", path, e))
}

/// How often a FIFO with no reader is tried again.
const READER_POLL: std::time::Duration = std::time::Duration::from_millis(20);

impl OutputFile {
    /// Opens `path` for writing as described on [`OutputFile`]. Fails before creating anything
    /// when the target is a directory or an existing file without `overwrite`. A FIFO nobody
    /// reads is waited for (tried again every few milliseconds); see [`OutputFile::try_create`]
    /// to be told at once instead.
    pub fn create(path: &Path, options: WriteOptions) -> Result<Self, RecordingError> {
        loop {
            match Self::try_create(path, options) {
                Err(RecordingError::NoReader { .. }) => std::thread::sleep(READER_POLL),
                other => return other,
            }
        }
    }

    /// [`OutputFile::create`], except that a FIFO nobody reads is
    /// [`RecordingError::NoReader`] at once: the caller waits for a reader its own way (one a
    /// stop signal can end).
    pub fn try_create(path: &Path, options: WriteOptions) -> Result<Self, RecordingError> {
        let inner = match output_target(path, options.overwrite)? {
            OutputTarget::Stdout => OutputInner::Stdout(BufWriter::new(std::io::stdout())),
            OutputTarget::Special => OutputInner::Direct(BufWriter::new(open_special(path)?)),
            OutputTarget::New | OutputTarget::Replace => {
                let dir = match path.parent() {
                    Some(dir) if !dir.as_os_str().is_empty() => dir,
                    _ => Path::new("."),
                };
                let name = path
                    .file_name()
                    .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
                let prefix = format!(".{name}.");
                let mut builder = tempfile::Builder::new();
                builder.prefix(&prefix).suffix(".tmp");
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt as _;
                    let mode = match options.mode {
                        FileMode::Private => 0o600,
                        FileMode::Umask => 0o666,
                    };
                    builder.permissions(fs::Permissions::from_mode(mode));
                }
                // Created and registered under the list's lock: the Ctrl+C handler
                // ([`remove_pending_temps`]) waits for it, so a temporary file on disk is always one
                // it removes, however early the interrupt comes.
                let mut pending = pending_temps();
                let tmp = builder
                    .tempfile_in(dir)
                    .map_err(|e| RecordingError::io("creating a temporary file for", path, e))?;
                pending.push(tmp.path().to_path_buf());
                drop(pending);
                OutputInner::Temp(BufWriter::new(tmp))
            }
        };
        Ok(Self {
            inner,
            path: path.to_path_buf(),
            overwrite: options.overwrite,
        })
    }

    /// The path being written (`-` for standard output).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Gives the output up: a file is not written at all (its temporary file is removed), while
    /// standard output and a device or FIFO keep what already went to them (flushed; they are
    /// streams, there is nothing to take back).
    pub fn discard(mut self) {
        match &mut self.inner {
            OutputInner::Stdout(w) => {
                w.flush().ok();
            }
            OutputInner::Direct(w) => {
                w.flush().ok();
            }
            // Dropped below: the temporary file goes with it.
            OutputInner::Temp(_) => {}
        }
    }

    /// Finishes the write: flushes, and for a file syncs it and renames it into place.
    pub fn commit(mut self) -> Result<(), RecordingError> {
        let inner = std::mem::replace(
            &mut self.inner,
            OutputInner::Stdout(BufWriter::new(std::io::stdout())),
        );
        let path = self.path.clone();
        match inner {
            OutputInner::Stdout(mut out) => out
                .flush()
                .map_err(|e| RecordingError::io("writing", &path, e)),
            OutputInner::Direct(mut out) => out
                .flush()
                .map_err(|e| RecordingError::io("writing", &path, e)),
            OutputInner::Temp(out) => {
                let tmp = out
                    .into_inner()
                    .map_err(|e| RecordingError::io("writing", &path, e.into_error()))?;
                let tmp_path = tmp.path().to_path_buf();
                let forget = |p: &Path| pending_temps().retain(|q| q != p);
                let result = tmp
                    .as_file()
                    .sync_all()
                    .map_err(|e| RecordingError::io("syncing", &path, e))
                    .and_then(|()| {
                        let persisted = if self.overwrite {
                            tmp.persist(&path)
                        } else {
                            tmp.persist_noclobber(&path)
                        };
                        // On error the temporary file is dropped with the error: removed.
                        persisted.map(drop).map_err(|e| {
                            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                                RecordingError::Exists { path: path.clone() }
                            } else {
                                RecordingError::io("renaming into place", &path, e.error)
                            }
                        })
                    });
                forget(&tmp_path);
                result?;
                sync_parent_dir(&path);
                Ok(())
            }
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let OutputInner::Temp(out) = &self.inner {
            let tmp = out.get_ref().path().to_path_buf();
            pending_temps().retain(|q| *q != tmp);
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.inner {
            OutputInner::Stdout(w) => w.write(buf),
            OutputInner::Direct(w) => w.write(buf),
            OutputInner::Temp(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match &mut self.inner {
            OutputInner::Stdout(w) => w.write_all(buf),
            OutputInner::Direct(w) => w.write_all(buf),
            OutputInner::Temp(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.inner {
            OutputInner::Stdout(w) => w.flush(),
            OutputInner::Direct(w) => w.flush(),
            OutputInner::Temp(w) => w.flush(),
        }
    }
}

/// Writes `bytes` to `path` with [`OutputFile`] (atomic, no symlink followed, devices written
/// straight, an existing file replaced only with `options.overwrite`).
pub fn write_file(path: &Path, bytes: &[u8], options: WriteOptions) -> Result<(), RecordingError> {
    let mut out = OutputFile::create(path, options)?;
    out.write_all(bytes)
        .map_err(|e| RecordingError::io("writing", path, e))?;
    out.commit()
}

/// Writes `rec` to `path` atomically and privately (`0600`), replacing an existing file (the
/// caller asked: a Save dialog, `--force`). See [`save_with`].
pub fn save(path: &Path, rec: &Recording) -> Result<(), RecordingError> {
    save_with(path, rec, WriteOptions::private(true))
}

/// Writes `rec` to `path` with [`OutputFile`]: a random-named temporary file, fsync, rename.
pub fn save_with(
    path: &Path,
    rec: &Recording,
    options: WriteOptions,
) -> Result<(), RecordingError> {
    let text = rec.try_to_ron_string().map_err(|e| e.with_path(path))?;
    write_file(path, text.as_bytes(), options)
}

/// `path` itself when neither it nor its journal (`path.partial`) exists, else the first free
/// `stem-2.ext`, `stem-3.ext`, …: default names (the recorder's, the proxy's) never collide.
/// Creating the journal with `O_EXCL` and saving without overwrite still guard against a race.
pub fn free_path(path: &Path) -> PathBuf {
    let taken = |p: &Path| {
        fs::symlink_metadata(p).is_ok() || fs::symlink_metadata(with_suffix(p, ".partial")).is_ok()
    };
    if !taken(path) {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map_or_else(|| "recording".into(), |s| s.to_string_lossy().into_owned());
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (2u64..)
        .map(|n| path.with_file_name(format!("{stem}-{n}{ext}")))
        .find(|p| !taken(p))
        .unwrap_or_else(|| path.to_path_buf())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::recording::test_support::*;
    use crate::recording::*;

    // ----- save and journal -----

    #[test]
    fn save_is_atomic_and_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.ron");
        let rec = rec_with_chunks(chunks_of(&[b"a", b"\xe6\xb7", b"\xb1"]));
        save(&path, &rec).unwrap();
        assert_eq!(names_in(dir.path()), ["out.ron"]);
        assert_eq!(load(&path).unwrap(), rec);
        let rec2 = rec_with_chunks(vec![]);
        rec2.save(&path).unwrap();
        assert_eq!(load(&path).unwrap(), rec2);
        let err = save(&dir.path().join("no/such/dir/x.ron"), &rec).unwrap_err();
        assert!(matches!(err, RecordingError::Io { .. }), "{err:?}");
        assert_eq!(names_in(dir.path()), ["out.ron"]);
    }

    #[test]
    fn an_existing_file_is_kept_without_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.ron");
        fs::write(&path, "precious").unwrap();
        let err = write_file(&path, b"new", WriteOptions::private(false)).unwrap_err();
        assert!(matches!(err, RecordingError::Exists { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "refusing to overwrite an existing file (use --force): {}",
                path.display()
            )
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "precious");
        write_file(&path, b"new", WriteOptions::private(true)).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(names_in(dir.path()), ["out.ron"]);
    }

    #[test]
    fn a_file_that_appears_while_writing_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let mut out = OutputFile::create(&path, WriteOptions::public(false)).unwrap();
        out.write_all(b"mine").unwrap();
        fs::write(&path, "theirs").unwrap();
        let err = out.commit().unwrap_err();
        assert!(matches!(err, RecordingError::Exists { .. }), "{err:?}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "theirs");
        assert_eq!(names_in(dir.path()), ["out.json"], "no temporary file left");
        // This output's temporary file is forgotten (other tests running at the same time may
        // have theirs pending: the list is the process's).
        assert!(pending_temps().iter().all(|p| !p.starts_with(dir.path())));
    }

    #[test]
    fn an_uncommitted_output_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let mut out = OutputFile::create(&path, WriteOptions::public(false)).unwrap();
        out.write_all(&[b'x'; 100_000]).unwrap();
        assert_eq!(names_in(dir.path()).len(), 1, "the temporary file");
        assert!(names_in(dir.path())[0].starts_with(".out.json."));
        drop(out);
        assert!(names_in(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "untouched").unwrap();
        let path = dir.path().join("out.ron");
        // At the target: refused without overwrite; replaced (not followed) with it.
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let err = write_file(&path, b"new", WriteOptions::private(false)).unwrap_err();
        assert!(matches!(err, RecordingError::Exists { .. }), "{err:?}");
        write_file(&path, b"new", WriteOptions::private(true)).unwrap();
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_file());
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "untouched");
        // At the journal's predictable name: refused.
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&victim, with_suffix(&path, ".partial")).unwrap();
        let err = JournalWriter::create(&path, &head()).unwrap_err();
        assert!(
            matches!(err, RecordingError::JournalExists { .. }),
            "{err:?}"
        );
        assert_eq!(fs::read_to_string(&victim).unwrap(), "untouched");
    }

    #[cfg(unix)]
    #[test]
    fn modes_private_and_umask() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let rec_path = dir.path().join("r.ron");
        save(&rec_path, &head()).unwrap();
        assert_eq!(mode(&rec_path), 0o600);
        let journal = JournalWriter::create(&dir.path().join("j.ron"), &head()).unwrap();
        assert_eq!(mode(journal.journal_path()), 0o600);
        // Public outputs get 0666 minus the umask: at most 0666, and never less than 0600.
        let export = dir.path().join("e.json");
        write_file(&export, b"[]", WriteOptions::public(false)).unwrap();
        let m = mode(&export);
        assert_eq!(m & !0o666, 0, "{m:o}");
        assert_eq!(m & 0o600, 0o600, "{m:o}");
    }

    #[test]
    fn special_targets_are_written_straight() {
        assert_eq!(
            output_target(Path::new("-"), false).unwrap(),
            OutputTarget::Stdout
        );
        #[cfg(unix)]
        {
            assert_eq!(
                output_target(Path::new("/dev/null"), false).unwrap(),
                OutputTarget::Special
            );
            write_file(Path::new("/dev/null"), b"x", WriteOptions::private(false)).unwrap();
            assert!(!fs::metadata("/dev/null").unwrap().file_type().is_file());
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            output_target(dir.path(), true),
            Err(RecordingError::Io { .. })
        ));
    }

    #[test]
    fn free_paths_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("recording-1.ron");
        assert_eq!(free_path(&base), base);
        fs::write(&base, "").unwrap();
        let second = free_path(&base);
        assert_eq!(second, dir.path().join("recording-1-2.ron"));
        fs::write(with_suffix(&second, ".partial"), "").unwrap();
        assert_eq!(free_path(&base), dir.path().join("recording-1-3.ron"));
    }
}
