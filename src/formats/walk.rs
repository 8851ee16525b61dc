//! Walking a folder for histories: the one walker of every command that takes a folder
//! (`check`, `stats`, `predict` through [`super::history_paths`], and `rank --histories`).
//!
//! - A folder that holds a directory format (cobra, viper, dbcop-bincode; given, or found by
//!   [`super::detect_dir`]) is one history and is not entered.
//! - Any other folder is entered once: folders are recognised by their device and inode, so a
//!   symbolic link back to a parent (or two links to one folder) is not followed again, and
//!   the walk ends on every tree. A file reached twice (through a link) is listed once.
//! - Hidden entries (`.name`) and the `.debug`/`.error` files Cobra leaves are passed over
//!   silently.
//! - Named pipes, sockets and devices are skipped with a note (opening a pipe would wait for
//!   a writer forever), as are broken links and entries that cannot be read.
//! - A regular file is taken as a history only if its format can be detected from its first
//!   [`DETECT_BYTES`] bytes ([`super::detect`]); others (a LICENSE, a README, an empty file)
//!   are skipped with a note. A file named on the command line is never walked past: it must
//!   parse.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::{detect, detect_dir, Format};

/// How many bytes of a file the walker reads to decide whether it is a history.
pub const DETECT_BYTES: u64 = 64 * 1024;

/// An entry the walk passed over, and why (for a note).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The entry.
    pub path: PathBuf,
    /// Why it is not read as a history (e.g. "a named pipe", "no history format detected").
    pub reason: String,
}

/// The result of a walk: the histories found (files and history folders, sorted by path), and
/// the entries skipped with a reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    /// The histories, sorted.
    pub histories: Vec<PathBuf>,
    /// The entries not taken, sorted by path.
    pub skipped: Vec<Skipped>,
}

/// Whether a folder is itself one history (a directory format).
fn is_history_dir(dir: &Path, format: Option<Format>) -> bool {
    match format {
        Some(f) => f.is_directory(),
        None => detect_dir(dir).is_some(),
    }
}

/// What kind of special file `t` is, `None` for regular files, folders and links.
fn special_kind(t: &fs::FileType) -> Option<&'static str> {
    if t.is_fifo() {
        Some("a named pipe")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else {
        None
    }
}

/// Why a regular file is not a history, or `None` when its format is detected.
fn undetected(path: &Path) -> Option<String> {
    let mut head = Vec::with_capacity(4096);
    match fs::File::open(path).and_then(|f| f.take(DETECT_BYTES).read_to_end(&mut head)) {
        Err(e) => Some(format!("cannot be read: {e}")),
        Ok(0) => Some("empty".to_string()),
        Ok(_) if detect(&head).is_none() => Some("no history format detected".to_string()),
        Ok(_) => None,
    }
}

/// Walks `path` for histories (see the module documentation). A path that is not a folder
/// is returned as the one history, unread (it must parse). Errors: the top folder cannot be
/// listed; a subfolder that cannot be listed is skipped with a note.
pub fn walk_histories(path: &Path, format: Option<Format>) -> io::Result<Walk> {
    let mut walk = Walk::default();
    if !path.is_dir() || is_history_dir(path, format) {
        walk.histories.push(path.to_path_buf());
        return Ok(walk);
    }
    let mut seen_dirs: HashSet<(u64, u64)> = HashSet::new();
    let mut seen_files: HashSet<(u64, u64)> = HashSet::new();
    let top = fs::metadata(path)?;
    seen_dirs.insert((top.dev(), top.ino()));
    let mut stack = vec![path.to_path_buf()];
    let mut first = true;
    while let Some(dir) = stack.pop() {
        let listing = match fs::read_dir(&dir) {
            Ok(l) => l,
            Err(e) if first => return Err(e),
            Err(e) => {
                walk.skipped.push(Skipped {
                    path: dir,
                    reason: format!("cannot be listed: {e}"),
                });
                continue;
            }
        };
        first = false;
        let mut entries: Vec<PathBuf> = listing
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    !n.starts_with('.') && !n.ends_with(".debug") && !n.ends_with(".error")
                })
            })
            .collect();
        entries.sort();
        let mut subdirs = Vec::new();
        for p in entries {
            // Follows links: a link to a file or folder counts as what it points to.
            let meta = match fs::metadata(&p) {
                Ok(m) => m,
                Err(e) => {
                    let reason = if fs::symlink_metadata(&p).is_ok_and(|m| m.is_symlink()) {
                        format!("a broken symbolic link ({e})")
                    } else {
                        format!("cannot be read: {e}")
                    };
                    walk.skipped.push(Skipped { path: p, reason });
                    continue;
                }
            };
            let id = (meta.dev(), meta.ino());
            let t = meta.file_type();
            if t.is_dir() {
                if !seen_dirs.insert(id) {
                    // Reached before (a link back to a parent, or a second link): not again.
                    continue;
                }
                if is_history_dir(&p, format) {
                    walk.histories.push(p);
                } else {
                    subdirs.push(p);
                }
            } else if let Some(kind) = special_kind(&t) {
                walk.skipped.push(Skipped {
                    path: p,
                    reason: kind.to_string(),
                });
            } else if seen_files.insert(id) {
                match undetected(&p) {
                    None => walk.histories.push(p),
                    Some(reason) => walk.skipped.push(Skipped { path: p, reason }),
                }
            }
        }
        // Visit subfolders in name order (the stack pops the last first).
        stack.extend(subdirs.into_iter().rev());
    }
    walk.histories.sort();
    walk.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(walk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("isopredict-walk-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    const PLUME: &str = "w(1,1,0,0)\n";

    #[test]
    fn link_cycles_are_not_followed_and_files_count_once() {
        let root = scratch("cycles");
        fs::create_dir(root.join("sub")).unwrap();
        fs::write(root.join("sub/h.plume"), PLUME).unwrap();
        fs::write(root.join("a.plume"), PLUME).unwrap();
        // Two links back to the top folder and one to a file: the walk still ends, and
        // every file is listed once.
        symlink(&root, root.join("sub/up")).unwrap();
        symlink("..", root.join("sub/up2")).unwrap();
        symlink("a.plume", root.join("same.plume")).unwrap();
        let walk = walk_histories(&root, None).unwrap();
        assert_eq!(
            walk.histories,
            [root.join("a.plume"), root.join("sub/h.plume")]
        );
        assert!(walk.skipped.is_empty(), "{:?}", walk.skipped);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn pipes_and_undetected_files_are_skipped_with_a_reason() {
        let root = scratch("special");
        fs::write(
            root.join("LICENSE"),
            "MIT License\n\nCopyright (c) someone\n",
        )
        .unwrap();
        fs::write(root.join("README.md"), "# Histories\n\nSee the paper.\n").unwrap();
        fs::write(root.join("empty.txt"), "").unwrap();
        fs::write(root.join("h.plume"), PLUME).unwrap();
        symlink("nowhere", root.join("broken")).unwrap();
        let fifo = std::ffi::CString::new(root.join("pipe").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let walk = walk_histories(&root, None).unwrap();
        assert_eq!(walk.histories, [root.join("h.plume")]);
        let reasons: Vec<(String, &str)> = walk
            .skipped
            .iter()
            .map(|s| {
                (
                    s.path.file_name().unwrap().to_string_lossy().into_owned(),
                    s.reason.as_str(),
                )
            })
            .collect();
        assert_eq!(reasons.len(), 5, "{reasons:?}");
        assert_eq!(reasons[0].0, "LICENSE");
        assert_eq!(reasons[0].1, "no history format detected");
        assert_eq!(reasons[1].0, "README.md");
        assert!(
            reasons[2].1.starts_with("a broken symbolic link"),
            "{reasons:?}"
        );
        assert_eq!(reasons[3], ("empty.txt".to_string(), "empty"));
        assert_eq!(reasons[4], ("pipe".to_string(), "a named pipe"));
        // A file named directly is not walked: it is returned to be read (and must parse).
        let alone = walk_histories(&root.join("LICENSE"), None).unwrap();
        assert_eq!(alone.histories, [root.join("LICENSE")]);
        fs::remove_dir_all(&root).unwrap();
    }
}
