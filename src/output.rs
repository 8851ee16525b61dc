//! Writing outputs without ever losing what was there.
//!
//! - A file ([`write_file_atomically`]) is written to a new temporary file in the target's
//!   folder, flushed to disk (`fsync`) and renamed over the target: a reader sees the old
//!   content or the new one, never a cut file, and a failed or refused write leaves the old file
//!   as it was. A target that exists but is not a regular file (a device, a folder, a pipe) is
//!   refused and left alone; a symbolic link is followed (the link stays, its target is
//!   replaced), but a link to nothing (a dangling link) is refused: writing through it would
//!   create a file wherever it points, and replacing it would lose the link.
//! - A folder of outputs ([`write_folder_atomically`], for `run` and `rank`) is built as a
//!   temporary sibling folder and swapped in under an exclusive lock on the parent folder
//!   (`flock`), so two commands writing one folder at the same time never mix their files: the
//!   folder holds one command's complete output. Every such folder holds a marker file,
//!   [`MARKER`]; an existing folder is replaced only if it holds the marker and nothing but
//!   files the command writes (an earlier run's, stale ones included), or is empty. Folders
//!   named like isopredict's outputs but written by someone else (a folder of `*.log` files)
//!   are refused, naming what is in the way, as is the working folder or one that holds it.
//! - Interrupted writes (Ctrl-C, SIGTERM: [`crate::interrupt`]) stop between blocks and remove
//!   their temporaries; [`remove_temporaries`] removes those of writes still in flight (for a
//!   second signal that exits at once).

/// `eprintln!` that never panics: a line on standard error, written if it can be. Standard
/// error that cannot be written (a full disk, `2>/dev/full`, a closed pipe) loses the line,
/// not the command's exit code (`eprintln!` panics there, exit 101). Every message of the tool
/// goes through it or [`ewrite!`].
#[macro_export]
macro_rules! ewriteln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics ([`ewriteln!`]).
#[macro_export]
macro_rules! ewrite {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut err = std::io::stderr();
        let _ = write!(err, $($arg)*);
        let _ = err.flush();
    }};
}

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// The marker file of every folder [`write_folder_atomically`] writes: an existing folder
/// without it is not isopredict's output and is never replaced (unless empty).
pub const MARKER: &str = ".isopredict-output";

/// What the marker file says.
const MARKER_TEXT: &str = "This folder was written by isopredict. The next isopredict command \
writing its output here replaces the whole folder; remove this file to prevent that.\n";

/// The temporary files and folders of writes in flight, removed by [`remove_temporaries`];
/// `None` once they were removed (the process is exiting: no new temporary is made).
static TEMPORARIES: Mutex<Option<Vec<PathBuf>>> = Mutex::new(Some(Vec::new()));

/// Makes the temporary `temp` with `create` and tracks it, as one step under the list's lock:
/// a signal that removes the temporaries either runs before (and `create` is refused) or after
/// (and removes it), never between a temporary's creation and its tracking.
fn create_tracked<T>(temp: &Path, create: impl FnOnce(&Path) -> io::Result<T>) -> io::Result<T> {
    let mut live = TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner());
    let Some(list) = live.as_mut() else {
        return Err(interrupted_error());
    };
    let made = create(temp)?;
    list.push(temp.to_path_buf());
    Ok(made)
}

fn untrack(temp: &Path) {
    let mut live = TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(list) = live.as_mut() {
        if let Some(i) = list.iter().position(|t| t == temp) {
            list.swap_remove(i);
        }
    }
}

/// Removes the temporary files and folders of the writes still in flight (called when the
/// process is about to exit at once, e.g. on a second Ctrl-C); the writes then fail, and no
/// write makes a temporary after this.
pub fn remove_temporaries() {
    let mut live = TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner());
    for temp in live.take().unwrap_or_default() {
        if temp.is_dir() {
            // A writer may add a file inside while it is being removed: try again then.
            for _ in 0..3 {
                if fs::remove_dir_all(&temp).is_ok() || !temp.exists() {
                    break;
                }
            }
        } else {
            let _ = fs::remove_file(&temp);
        }
    }
}

/// The error of a write stopped by a stop request.
fn interrupted_error() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "interrupted; nothing written")
}

/// A writer that fails once a stop was requested ([`crate::interrupt::requested`]), so a long
/// write stops within one block.
struct StopOnInterrupt<W>(W);

impl<W: Write> Write for StopOnInterrupt<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if crate::interrupt::requested() {
            return Err(interrupted_error());
        }
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Writing an output failed or was refused; names the path.
#[derive(Debug, thiserror::Error)]
#[error("{}: {error}", path.display())]
pub struct OutputError {
    /// The output (file or folder) that could not be written.
    pub path: PathBuf,
    /// Why (in the message, not repeated as a source).
    pub error: io::Error,
}

impl OutputError {
    fn new(path: &Path, error: io::Error) -> Self {
        OutputError {
            path: path.to_path_buf(),
            error,
        }
    }

    fn refused(path: &Path, message: String) -> Self {
        OutputError::new(path, io::Error::other(message))
    }
}

/// What kind of file system object `meta` describes, for messages.
fn kind(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a folder"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// A fresh name `.NAME.PID.N.tmp` beside `path` (unique within this process).
fn temporary_sibling(path: &Path) -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let mut name = OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    path.with_file_name(name)
}

/// The folder holding `path` (`.` for a bare file name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Flushes a folder's entries (new names, renames) to disk.
fn sync_folder(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Writes a file atomically: `write` fills a temporary file in the same folder, which is then
/// flushed to disk and renamed over `path`. On any failure (including an error returned by
/// `write`) the temporary file is removed and whatever was at `path` is untouched. A `path`
/// that exists and is not a regular file is refused.
pub fn write_file_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), OutputError> {
    if path.as_os_str().is_empty() {
        return Err(OutputError::refused(path, "empty output path".to_string()));
    }
    let mut target = path.to_path_buf();
    let mut permissions = None;
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            permissions = Some(meta.permissions());
            if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                target = fs::canonicalize(path).map_err(|e| OutputError::new(path, e))?;
            }
        }
        Ok(meta) => {
            return Err(OutputError::refused(
                path,
                format!(
                    "not a regular file ({}); refusing to write over it",
                    kind(&meta)
                ),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Ok(link) = fs::read_link(path) {
                return Err(OutputError::refused(
                    path,
                    format!(
                        "a symbolic link to {}, which does not exist; refusing to write \
                         through it or replace it (remove the link or give another path)",
                        link.display()
                    ),
                ));
            }
        }
        Err(e) => return Err(OutputError::new(path, e)),
    }
    let temp = temporary_sibling(&target);
    let mut file = create_tracked(&temp, |temp| {
        File::options().write(true).create_new(true).open(temp)
    })
    .map_err(|e| OutputError::new(path, e))?;
    let result = (|| {
        {
            let mut buffered = io::BufWriter::with_capacity(1 << 16, StopOnInterrupt(&mut file));
            write(&mut buffered)?;
            buffered.flush()?;
        }
        if crate::interrupt::requested() {
            return Err(interrupted_error());
        }
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, &target)?;
        // The rename is done; a failure to flush the folder is not worth failing for.
        let _ = sync_folder(parent_of(&target));
        Ok(())
    })();
    untrack(&temp);
    result.map_err(|e| {
        let _ = fs::remove_file(&temp);
        OutputError::new(path, e)
    })
}

/// An exclusive `flock` on a folder, released when dropped.
struct FolderLock(File);

impl FolderLock {
    fn take(dir: &Path) -> io::Result<FolderLock> {
        use std::os::fd::AsRawFd;
        let file = File::open(dir)?;
        loop {
            // SAFETY: flock on a file descriptor this struct owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(FolderLock(file));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: unlocking the descriptor locked in `take`.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Whether `dir` is the working folder or holds it (replacing it would pull the folder out
/// from under the shell that runs the command).
fn holds_working_folder(dir: &Path) -> bool {
    match (
        fs::canonicalize(dir),
        std::env::current_dir().and_then(fs::canonicalize),
    ) {
        (Ok(dir), Ok(cwd)) => cwd.starts_with(dir),
        _ => false,
    }
}

/// Checks that `dir`, if it exists, is a folder isopredict may replace: empty, or holding
/// [`MARKER`] and only names in `ours`; never the working folder or one that holds it.
/// `Ok(true)` when it exists.
fn check_replaceable(dir: &Path, ours: &[&str]) -> Result<bool, OutputError> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(OutputError::new(dir, e)),
    };
    if !meta.is_dir() {
        let what = if meta.file_type().is_symlink() {
            "a symbolic link"
        } else {
            kind(&meta)
        };
        return Err(OutputError::refused(
            dir,
            format!("exists and is {what}, not an output folder; refusing to replace it"),
        ));
    }
    if holds_working_folder(dir) {
        return Err(OutputError::refused(
            dir,
            "is the working folder or holds it; refusing to replace it \
             (choose another output folder)"
                .to_string(),
        ));
    }
    let mut foreign = Vec::new();
    let mut marked = false;
    let mut entries = 0usize;
    for entry in fs::read_dir(dir).map_err(|e| OutputError::new(dir, e))? {
        let entry = entry.map_err(|e| OutputError::new(dir, e))?;
        entries += 1;
        let name = entry.file_name();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && name == MARKER {
            marked = true;
        } else if !is_file || !ours.iter().any(|o| name == **o) {
            foreign.push(name.to_string_lossy().into_owned());
        }
    }
    if entries > 0 && !marked && foreign.is_empty() {
        return Err(OutputError::refused(
            dir,
            format!(
                "the folder has no {MARKER} file, so isopredict did not write it; \
                 refusing to replace it (choose another output folder or empty this one)"
            ),
        ));
    }
    if !foreign.is_empty() {
        foreign.sort();
        let shown = foreign.len().min(5);
        let more = if foreign.len() > shown {
            format!(" and {} more", foreign.len() - shown)
        } else {
            String::new()
        };
        return Err(OutputError::refused(
            dir,
            format!(
                "the folder holds {}{more}, which isopredict did not write; \
                 refusing to replace it (choose another output folder or empty this one)",
                foreign[..shown].join(", ")
            ),
        ));
    }
    Ok(true)
}

/// Swaps two paths atomically (Linux `renameat2(RENAME_EXCHANGE)`); `false` when the system
/// cannot, and the caller falls back to two renames.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes())?;
    let b = std::ffi::CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: two valid NUL-terminated paths relative to the working folder.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::ENOTSUP) => Ok(false),
        _ => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<bool> {
    Ok(false)
}

/// Writes a folder of outputs atomically: `files` (name, content) are written into a temporary
/// sibling folder, flushed to disk, and swapped in for `dir` under an exclusive lock on the
/// parent folder. An existing `dir` is replaced (an earlier run's stale files go with it) only
/// if it holds nothing but files named in `ours`; otherwise nothing is written and the error
/// names what is in the way. On any failure `dir` is untouched and the temporary folder is
/// removed.
pub fn write_folder_atomically(
    dir: &Path,
    files: &[(&str, &[u8])],
    ours: &[&str],
) -> Result<(), OutputError> {
    write_folder_streamed(
        dir,
        files
            .iter()
            .map(|&(name, content)| -> FolderFile<'_> {
                (
                    name,
                    Box::new(move |out: &mut dyn Write| out.write_all(content)),
                )
            })
            .collect(),
        ours,
    )
}

/// A file of [`write_folder_streamed`]: its name and the function that writes its content.
pub type FolderFile<'a> = (
    &'a str,
    Box<dyn FnOnce(&mut dyn Write) -> io::Result<()> + 'a>,
);

/// [`write_folder_atomically`] with each file's content written straight into the temporary
/// folder (buffered) by its function, so that large files are never held in memory whole.
pub fn write_folder_streamed(
    dir: &Path,
    files: Vec<FolderFile<'_>>,
    ours: &[&str],
) -> Result<(), OutputError> {
    if dir.file_name().is_none() {
        return Err(OutputError::refused(
            dir,
            "not a folder name isopredict can replace (give a folder to create, such as out/run)"
                .to_string(),
        ));
    }
    check_replaceable(dir, ours)?;
    let parent = parent_of(dir);
    fs::create_dir_all(parent).map_err(|e| OutputError::new(parent, e))?;
    let temp = temporary_sibling(dir);
    create_tracked(&temp, |temp| fs::create_dir(temp)).map_err(|e| OutputError::new(dir, e))?;
    let marker: FolderFile<'_> = (
        MARKER,
        Box::new(|out: &mut dyn Write| out.write_all(MARKER_TEXT.as_bytes())),
    );
    let result = (|| -> Result<(), OutputError> {
        for (name, write) in files.into_iter().chain(std::iter::once(marker)) {
            if crate::interrupt::requested() {
                return Err(OutputError::new(dir, interrupted_error()));
            }
            let path = temp.join(name);
            let fail = |e| OutputError::new(&dir.join(name), e);
            let file = File::options()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(fail)?;
            let mut buffered = io::BufWriter::with_capacity(1 << 16, file);
            write(&mut buffered).map_err(fail)?;
            let file = buffered.into_inner().map_err(|e| fail(e.into_error()))?;
            file.sync_all().map_err(fail)?;
        }
        sync_folder(&temp).map_err(|e| OutputError::new(dir, e))?;
        if crate::interrupt::requested() {
            return Err(OutputError::new(dir, interrupted_error()));
        }
        let _lock = FolderLock::take(parent).map_err(|e| OutputError::new(parent, e))?;
        // Another command may have written `dir` while this one was working.
        let exists = check_replaceable(dir, ours)?;
        if !exists {
            fs::rename(&temp, dir).map_err(|e| OutputError::new(dir, e))?;
        } else if exchange(&temp, dir).map_err(|e| OutputError::new(dir, e))? {
            // `temp` now holds the old folder.
            let _ = fs::remove_dir_all(&temp);
        } else {
            let old = temporary_sibling(dir);
            fs::rename(dir, &old).map_err(|e| OutputError::new(dir, e))?;
            if let Err(e) = fs::rename(&temp, dir) {
                let _ = fs::rename(&old, dir);
                return Err(OutputError::new(dir, e));
            }
            let _ = fs::remove_dir_all(&old);
        }
        let _ = sync_folder(parent);
        Ok(())
    })();
    untrack(&temp);
    if result.is_err() {
        let _ = fs::remove_dir_all(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("isopredict-output-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_leaves_no_temporary() {
        let dir = scratch("file");
        let path = dir.join("a.txt");
        fs::write(&path, "old").unwrap();
        let e = write_file_atomically(&path, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(e.to_string(), format!("{}: disk full", path.display()));
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(names(&dir), ["a.txt"]);
        write_file_atomically(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(names(&dir), ["a.txt"]);
        // A symbolic link stays a link; its target gets the content.
        std::os::unix::fs::symlink("a.txt", dir.join("link")).unwrap();
        write_file_atomically(&dir.join("link"), |w| w.write_all(b"via link")).unwrap();
        assert!(fs::symlink_metadata(dir.join("link"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&path).unwrap(), "via link");
        // A folder is refused.
        let e = write_file_atomically(&dir, |w| w.write_all(b"x")).unwrap_err();
        assert!(
            e.to_string().contains("not a regular file (a folder)"),
            "{e}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_is_replaced_whole_or_not_at_all() {
        let root = scratch("folder");
        let out = root.join("run");
        let ours = ["a", "b", "c"];
        write_folder_atomically(&out, &[("a", b"1"), ("b", b"2")], &ours).unwrap();
        assert_eq!(names(&out), [MARKER, "a", "b"]);
        // The new output has no `b`: the stale one goes.
        write_folder_atomically(&out, &[("a", b"3"), ("c", b"4")], &ours).unwrap();
        assert_eq!(names(&out), [MARKER, "a", "c"]);
        assert_eq!(fs::read_to_string(out.join("a")).unwrap(), "3");
        assert_eq!(names(&root), ["run"]);
        // Something else in the folder: refused, nothing changes.
        fs::write(out.join("mine.txt"), "keep").unwrap();
        let e = write_folder_atomically(&out, &[("a", b"5")], &ours).unwrap_err();
        assert!(e.to_string().contains("mine.txt"), "{e}");
        assert_eq!(names(&out), [MARKER, "a", "c", "mine.txt"]);
        assert_eq!(fs::read_to_string(out.join("a")).unwrap(), "3");
        assert_eq!(names(&root), ["run"]);
        // A file where the folder should be: refused.
        fs::write(root.join("file"), "x").unwrap();
        let e = write_folder_atomically(&root.join("file"), &[("a", b"5")], &ours).unwrap_err();
        assert!(e.to_string().contains("not an output folder"), "{e}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_folder_of_the_same_names_without_the_marker_is_not_replaced() {
        let root = scratch("foreign");
        let theirs = root.join("logs");
        fs::create_dir(&theirs).unwrap();
        fs::write(theirs.join("a"), "their file").unwrap();
        let e = write_folder_atomically(&theirs, &[("a", b"1")], &["a"]).unwrap_err();
        assert!(e.to_string().contains(MARKER), "{e}");
        assert_eq!(names(&theirs), ["a"]);
        assert_eq!(fs::read_to_string(theirs.join("a")).unwrap(), "their file");
        // An empty folder may be written.
        let empty = root.join("empty");
        fs::create_dir(&empty).unwrap();
        write_folder_atomically(&empty, &[("a", b"1")], &["a"]).unwrap();
        assert_eq!(names(&empty), [MARKER, "a"]);
        // A folder that holds the working folder is never replaced.
        assert!(holds_working_folder(Path::new(".")));
        assert!(holds_working_folder(&std::env::current_dir().unwrap()));
        assert!(!holds_working_folder(&empty));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_dangling_link_is_refused_and_left_alone() {
        let dir = scratch("dangling");
        let link = dir.join("out.json");
        std::os::unix::fs::symlink("missing/target.json", &link).unwrap();
        let e = write_file_atomically(&link, |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(names(&dir), ["out.json"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
