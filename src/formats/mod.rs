//! Reading and writing histories in external formats, and detecting a format from content.
//!
//! One file per format, each reading and writing (docs/formats.md describes them all):
//! - [`json`]: the native, versioned JSON schema; carries everything a [`History`] has.
//! - [`isopredict`]: traces of the IsoPredict artifact (PLDI'24), `WRITE KEY[k] Txn(s, i)` …
//! - [`plume`]: Plume/PolySI text, `r(k,v,s,t)` / `w(k,v,s,t)`.
//! - [`awdit`]: the AWDIT test format, `r k v` / `w k v` with `-----` and `=====` separators.
//! - [`dbcop`]: dbcop's current JSON (`{"data": [sessions]}` or a bare array of sessions).
//! - [`dbcop_text`]: dbcop's text DSL, `[x:=1 y==2 z==?]`, `---` between sessions.
//! - [`dbcop_bincode`]: dbcop's 2019 binary `history.bincode` (PolySI, Plume, AWDIT).
//! - [`elle`]: Elle/Jepsen histories in EDN or Jepsen's JSON rendering (rw-register and
//!   list-append; list-append reads give the known version order).
//! - [`cobra`]: Cobra's binary client logs (a directory of `*.log`).
//! - [`viper`]: Viper's JSON-lines logs (a directory of `J*.log`).
//!
//! Directory formats (dbcop-bincode, cobra, viper) are read with [`read_path`], which also
//! detects them; [`write_file`] writes them as a directory.
//! - [`timekiller`]: TimeKiller (Chronos/Aion) JSON, timestamped transactions, kv and lists.
//! - [`events`]: JSON lines, one event (begin/read/write/commit/abort) per line, what an
//!   application records itself (docs/recording.md).
//!
//! Reading never panics: malformed input gives an [`InputError`] naming the file, the line
//! and the problem. Writing refuses ([`FormatError::Unrepresentable`]) a history whose
//! write–read relation the format cannot express; [`conversion_notes`] lists what a format
//! drops without changing which write each read observes (values, timestamps, …).

pub mod awdit;
pub mod cobra;
mod common;
pub mod dbcop;
pub mod dbcop_bincode;
pub mod dbcop_text;
mod edn;
pub mod elle;
pub mod events;
mod file;
pub mod isopredict;
pub mod json;
pub mod plume;
mod text;
pub mod timekiller;
pub mod viper;
pub mod walk;

pub use file::read_file_bytes;

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::InputError;
use crate::history::{self, History};

/// A history format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Format {
    /// The native JSON schema (`isopredict-history`, version 1).
    #[value(name = "json")]
    Json,
    /// IsoPredict traces.
    #[value(name = "isopredict")]
    IsoPredict,
    /// Plume/PolySI text.
    #[value(name = "plume")]
    Plume,
    /// The AWDIT test format.
    #[value(name = "awdit")]
    Awdit,
    /// dbcop's current JSON.
    #[value(name = "dbcop")]
    Dbcop,
    /// dbcop's text DSL.
    #[value(name = "dbcop-text")]
    DbcopText,
    /// dbcop's 2019 `history.bincode` (a directory holding it, or the file).
    #[value(name = "dbcop-bincode")]
    DbcopBincode,
    /// Elle/Jepsen EDN.
    #[value(name = "elle")]
    Elle,
    /// Jepsen's JSON rendering of an Elle history.
    #[value(name = "elle-json")]
    ElleJson,
    /// Cobra binary client logs (a directory of `*.log`, or one log).
    #[value(name = "cobra")]
    Cobra,
    /// Viper JSON-lines logs (a directory of `J*.log`, or one log).
    #[value(name = "viper")]
    Viper,
    /// TimeKiller (Chronos/Aion) JSON: transactions with start and commit timestamps.
    #[value(name = "timekiller")]
    TimeKiller,
    /// JSON lines, one event per line (an application's own recording).
    #[value(name = "jsonl")]
    Events,
}

impl Format {
    /// Every format, in the order of the formats table.
    pub const ALL: [Format; 13] = [
        Format::Json,
        Format::IsoPredict,
        Format::Plume,
        Format::Awdit,
        Format::Dbcop,
        Format::DbcopText,
        Format::DbcopBincode,
        Format::Elle,
        Format::ElleJson,
        Format::Cobra,
        Format::Viper,
        Format::TimeKiller,
        Format::Events,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::IsoPredict => "isopredict",
            Format::Plume => "plume",
            Format::Awdit => "awdit",
            Format::Dbcop => "dbcop",
            Format::DbcopText => "dbcop-text",
            Format::DbcopBincode => "dbcop-bincode",
            Format::Elle => "elle",
            Format::ElleJson => "elle-json",
            Format::Cobra => "cobra",
            Format::Viper => "viper",
            Format::TimeKiller => "timekiller",
            Format::Events => "jsonl",
        }
    }

    /// Whether the format is (usually) a directory of files: dbcop-bincode, cobra, viper.
    pub fn is_directory(self) -> bool {
        matches!(self, Format::DbcopBincode | Format::Cobra | Format::Viper)
    }

    /// The format a file extension names (`json`, `isopredict`, `plume`, `awdit`, `dbcop`,
    /// `edn` for elle, `bincode` for dbcop-bincode, or any other format's name), if any.
    /// `.txt` names none: all three text formats use it.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "edn" => return Some(Format::Elle),
            "bincode" => return Some(Format::DbcopBincode),
            _ => {}
        }
        Format::ALL.into_iter().find(|f| f.name() == ext)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown format `{s}` (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// Why a history could not be written.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Creating or writing a file failed.
    #[error("{}: {error}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong (in the message, not repeated as a source).
        error: std::io::Error,
    },
    /// The format is a directory of files, which a single output stream cannot hold.
    #[error("{0} is written as a directory of files; give an output directory, not a stream")]
    NeedsDirectory(Format),
    /// The format cannot express something the history has that changes which write a read
    /// observes (e.g. a read without a writer in an IsoPredict trace).
    #[error("cannot write this history as {format}: {problem}")]
    Unrepresentable {
        /// The target format.
        format: Format,
        /// What cannot be expressed, naming the transaction or operation.
        problem: String,
    },
}

/// Detects the format from the content. Binary content (a NUL byte among the first 64) is
/// Cobra when it starts with a plausible `S` record, else dbcop-bincode. TimeKiller JSON (an
/// array or stream of objects whose first has `"sts"`, `"cts"` and `"ops"`) comes next.
/// Otherwise the first
/// line that is neither blank nor a `#`, `//` or `;` comment decides: a JSON object with an `"event"` field → jsonl; `{:` or
/// `[{:` → elle;
/// `[[` → dbcop; `[` with anything else but `{` → dbcop-text; a JSON object or array of
/// objects by its keys (`"events"` → dbcop, `"type"` with `"f"` or `"process"` → elle-json,
/// `"value"` with a nested array → viper, else json); `r(`/`w(` → plume; `WRITE KEY[`,
/// `READ KEY[`, `INSERT[`, `CONTAINS[`, `DELETE[` → isopredict; `r `/`w ` or a line of `-`/`=`
/// → awdit (a line of exactly `---` followed by `[` lines → dbcop-text). `None` when nothing
/// decides.
pub fn detect(text: impl AsRef<[u8]>) -> Option<Format> {
    detect_with_line(text.as_ref()).0
}

/// The detected format and the line that decided (or the first significant line, or 0).
fn detect_with_line(bytes: &[u8]) -> (Option<Format>, u32) {
    if let Some(f) = detect_binary(bytes) {
        return (Some(f), 1);
    }
    let bytes = text::strip_bom(bytes);
    if timekiller::looks_like(bytes) {
        return (Some(Format::TimeKiller), 1);
    }
    let mut dashes_line = None;
    for (line_no, line) in text::Lines::new(bytes) {
        let line = text::trim(line);
        if text::is_blank_or_comment(line) || line.starts_with(b"//") || line[0] == b';' {
            continue;
        }
        if line == b"---" && dashes_line.is_none() {
            // dbcop-text's session separator, or an AWDIT transaction separator: the next
            // significant line decides.
            dashes_line = Some(line_no);
            continue;
        }
        let found = match line[0] {
            b'{' if events::looks_like(line) => Some(Format::Events),
            b'{' | b'[' => detect_structured(bytes, line),
            _ => detect_line(line),
        };
        return match (found, dashes_line) {
            (Some(Format::DbcopText), _) => (found, line_no),
            (_, Some(d)) => (Some(Format::Awdit), d),
            _ => (found, line_no),
        };
    }
    match dashes_line {
        Some(d) => (Some(Format::Awdit), d),
        None => (None, 0),
    }
}

/// Binary formats: a NUL byte among the first 64 bytes.
fn detect_binary(bytes: &[u8]) -> Option<Format> {
    let head = &bytes[..bytes.len().min(64)];
    if !head.contains(&0) {
        return None;
    }
    if cobra::looks_like(bytes) {
        Some(Format::Cobra)
    } else {
        Some(Format::DbcopBincode)
    }
}

/// `{…` or `[…`: EDN, dbcop JSON or text, Jepsen JSON, Viper or the native JSON.
fn detect_structured(bytes: &[u8], line: &[u8]) -> Option<Format> {
    // The first two significant bytes of the document from this line on.
    let start = line.as_ptr() as usize - bytes.as_ptr() as usize;
    let rest = &bytes[start..];
    let mut significant = rest
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace() && *b != b',');
    let first = significant.next()?;
    let second = significant.next();
    let third = significant.next();
    if first == b'[' {
        match second {
            Some(b'[') => return Some(Format::Dbcop),
            Some(b'{') if third == Some(b':') => return Some(Format::Elle),
            Some(b'{') => {}
            _ => return Some(Format::DbcopText),
        }
    } else if second == Some(b':') {
        return Some(Format::Elle);
    }
    let head = &rest[..rest.len().min(4096)];
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    if has(b"\"isopredict-history\"") || has(b"\"sessions\"") {
        Some(Format::Json)
    } else if has(b"\"events\"") || has(b"\"data\"") {
        Some(Format::Dbcop)
    } else if has(b"\"type\"") && (has(b"\"f\"") || has(b"\"process\"")) {
        Some(Format::ElleJson)
    } else if has(b"\"value\"") && (has(b"[[") || has(b"isInitial")) {
        Some(Format::Viper)
    } else {
        Some(Format::Json)
    }
}

fn detect_line(line: &[u8]) -> Option<Format> {
    if isopredict::looks_like(line) {
        return Some(Format::IsoPredict);
    }
    if plume::looks_like(line) {
        return Some(Format::Plume);
    }
    if awdit::looks_like(line) {
        return Some(Format::Awdit);
    }
    None
}

/// Detects a directory format from the directory's entries: `history.bincode` →
/// dbcop-bincode; a `J*.log` file → viper; another `*.log` file → cobra. `None` for any other
/// directory (e.g. a folder of histories).
pub fn detect_dir(dir: &Path) -> Option<Format> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut found = None;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name == dbcop_bincode::FILE_NAME {
            return Some(Format::DbcopBincode);
        }
        if name.ends_with(".log") && entry.path().is_file() {
            if name.starts_with('J') && viper::looks_like_file(&entry.path()) {
                found = Some(Format::Viper);
            } else if found.is_none() {
                found = Some(Format::Cobra);
            }
        }
    }
    found
}

/// Reads a history from bytes; `source` names the input in errors. `None` detects the format.
pub fn read_bytes(
    bytes: &[u8],
    source: &str,
    format: Option<Format>,
) -> Result<History, InputError> {
    let format = match format {
        Some(f) => f,
        None => match detect_with_line(bytes) {
            (Some(f), _) => f,
            (None, 0) => {
                return Err(InputError::new(
                    source,
                    0,
                    "the input has no operations, so its format cannot be detected \
                     (name it with --format)",
                ))
            }
            (None, line) => {
                return Err(InputError::new(
                    source,
                    line,
                    "unknown format: expected `{\"event\": …}` lines (jsonl), `{` (json, dbcop, elle-json, viper), `{:` \
                     (elle), `[` (dbcop, dbcop-text), `r(`/`w(` (plume), \
                     `WRITE KEY[`/`READ KEY[`/`INSERT[`/`CONTAINS[`/`DELETE[` (isopredict) \
                     or `r `/`w `/`---`/`===` (awdit); name it with --format",
                ))
            }
        },
    };
    if format == Format::DbcopBincode {
        return dbcop_bincode::read(bytes, source);
    }
    if format == Format::Cobra {
        return cobra::read_logs(&[(source.to_string(), bytes)], source);
    }
    let bytes = text::strip_bom(bytes);
    match format {
        Format::Json => json::read(bytes, source),
        Format::IsoPredict => isopredict::read(bytes, source),
        Format::Plume => plume::read(bytes, source),
        Format::Awdit => awdit::read(bytes, source),
        Format::Dbcop => dbcop::read(bytes, source),
        Format::DbcopText => dbcop_text::read(bytes, source),
        Format::Elle => elle::read_edn(bytes, source),
        Format::ElleJson => elle::read_json(bytes, source),
        Format::Viper => viper::read_files(&[(source.to_string(), bytes)], source),
        Format::DbcopBincode | Format::Cobra => unreachable!("handled above"),
        Format::TimeKiller => timekiller::read(bytes, source),
        Format::Events => events::read(bytes, source),
    }
}

/// The histories a path names, for commands that take many: a file, or `-`, is one; a
/// directory that holds a directory format (given as `format`, or detected by [`detect_dir`])
/// is one; any other directory is walked ([`walk::walk_histories`]: each folder once, links
/// back to a parent not followed, each file once, pipes and devices skipped, and only files
/// whose format is detected taken). The entries skipped, with why, are in
/// [`walk::walk_histories`]'s result.
pub fn history_paths(path: &Path, format: Option<Format>) -> std::io::Result<Vec<PathBuf>> {
    Ok(walk::walk_histories(path, format)?.histories)
}

/// Reads a history from a file, a directory, or standard input (`-`); returns it with its
/// format. `None` detects the format (directories by their entries, [`detect_dir`]; files by
/// their content). Files are read by [`read_file_bytes`] (bounded; devices refused). A
/// directory that holds no directory format is an error.
pub fn read_path(path: &Path, format: Option<Format>) -> Result<(History, Format), InputError> {
    let source = path.display().to_string();
    if path != Path::new("-") && path.is_dir() {
        let format = match format.or_else(|| detect_dir(path)) {
            Some(f) => f,
            None => {
                return Err(InputError::new(
                    source,
                    0,
                    "a directory without history.bincode (dbcop-bincode) or *.log files \
                     (cobra, viper)",
                ))
            }
        };
        let history = match format {
            Format::DbcopBincode => {
                let file = path.join(dbcop_bincode::FILE_NAME);
                let file_source = file.display().to_string();
                let bytes = std::fs::read(&file)
                    .map_err(|e| InputError::new(file_source.clone(), 0, e.to_string()))?;
                dbcop_bincode::read(&bytes, &file_source)?
            }
            Format::Cobra => cobra::read_dir(path)?,
            Format::Viper => viper::read_dir(path)?,
            other => {
                return Err(InputError::new(
                    source,
                    0,
                    format!("{other} is a single file, not a directory"),
                ))
            }
        };
        return Ok((history, format));
    }
    let (bytes, source) = read_file_bytes(path)?;
    let history = read_bytes(&bytes, &source, format)?;
    // Reading succeeded, so detection (when asked for) found a format.
    let format = format.or_else(|| detect(&bytes)).unwrap_or(Format::Json);
    Ok((history, format))
}

/// Reads a history from text; `source` names the input in errors. `None` detects the format.
pub fn read_str(text: &str, source: &str, format: Option<Format>) -> Result<History, InputError> {
    read_bytes(text.as_bytes(), source, format)
}

/// Reads a history from a file or directory ([`read_path`]). `None` detects the format. I/O
/// errors become an [`InputError`] at line 0.
pub fn read_file(path: &Path, format: Option<Format>) -> Result<History, InputError> {
    read_path(path, format).map(|(h, _)| h)
}

/// Writes a history in `format`.
pub fn write_to(history: &History, format: Format, out: &mut dyn Write) -> Result<(), FormatError> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    match format {
        Format::Json => json::write(history, &mut out)?,
        Format::IsoPredict => isopredict::write(history, &mut out)?,
        Format::Plume => plume::write(history, &mut out)?,
        Format::Awdit => awdit::write(history, &mut out)?,
        Format::Dbcop => dbcop::write(history, &mut out)?,
        Format::DbcopText => dbcop_text::write(history, &mut out)?,
        Format::DbcopBincode => dbcop_bincode::write(history, &mut out)?,
        Format::Elle => elle::write_edn(history, &mut out)?,
        Format::ElleJson => elle::write_json(history, &mut out)?,
        Format::Cobra | Format::Viper => return Err(FormatError::NeedsDirectory(format)),
        Format::TimeKiller => timekiller::write(history, &mut out)?,
        Format::Events => events::write(history, &mut out)?,
    }
    out.flush()?;
    Ok(())
}

/// Writes a history in `format` as named files `(name, contents)`: one unnamed part (name
/// `""`) for single-file formats, the directory's files for directory formats (cobra, viper,
/// dbcop-bincode). With [`read_parts`], round trips of every format in memory.
pub fn write_parts(
    history: &History,
    format: Format,
) -> Result<Vec<(String, Vec<u8>)>, FormatError> {
    match format {
        Format::Cobra => cobra::write_files(history),
        Format::Viper => viper::write_files(history),
        _ => {
            let mut bytes = Vec::new();
            write_to(history, format, &mut bytes)?;
            let name = if format == Format::DbcopBincode {
                dbcop_bincode::FILE_NAME.to_string()
            } else {
                String::new()
            };
            Ok(vec![(name, bytes)])
        }
    }
}

/// Reads a history from named parts as [`write_parts`] produces them (for single-file formats,
/// the first part); `source` names the input in errors.
pub fn read_parts(
    parts: &[(String, Vec<u8>)],
    format: Format,
    source: &str,
) -> Result<History, InputError> {
    let named: Vec<(String, &[u8])> = parts.iter().map(|(n, b)| (n.clone(), &b[..])).collect();
    match format {
        Format::Cobra => cobra::read_logs(&named, source),
        Format::Viper => viper::read_files(&named, source),
        _ => match parts.first() {
            Some((_, bytes)) => read_bytes(bytes, source, Some(format)),
            None => read_bytes(b"", source, Some(format)),
        },
    }
}

/// Writes a history to a file in `format`, atomically ([`crate::output`]): on any failure
/// (or a refused conversion) whatever was at `path` is left as it was, and a `path` that is
/// not a regular file (a device, a folder) is refused. Directory formats (cobra, viper, and
/// dbcop-bincode unless the path ends in `.bincode`) write the folder `path` atomically; an
/// existing folder is replaced only if it is a history of the same format (holding nothing but
/// its log files and the files this history writes); anything else at `path` is refused.
pub fn write_file(history: &History, path: &Path, format: Format) -> Result<(), FormatError> {
    let bincode_file = format == Format::DbcopBincode
        && path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("bincode"));
    if format.is_directory() && !bincode_file {
        if path.exists() && (!path.is_dir() || detect_dir(path) != Some(format)) {
            // Never replace a file or a directory that is not a history of this format.
            return Err(FormatError::File {
                path: path.to_path_buf(),
                error: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    format!("exists and is not a {format} directory; refusing to replace it"),
                ),
            });
        }
        let files = write_parts(history, format)?;
        let named: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        // The same format's files of an earlier history in `path` may be replaced too.
        let earlier: Vec<String> = std::fs::read_dir(path)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| {
                        n == dbcop_bincode::FILE_NAME
                            || [".log", ".debug", ".error"].iter().any(|x| n.ends_with(x))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let ours: Vec<&str> = named
            .iter()
            .map(|(n, _)| *n)
            .chain(earlier.iter().map(String::as_str))
            .collect();
        return crate::output::write_folder_atomically(path, &named, &ours).map_err(|e| {
            FormatError::File {
                path: e.path,
                error: e.error,
            }
        });
    }
    let mut refused = None;
    let written =
        crate::output::write_file_atomically(path, |out| match write_to(history, format, out) {
            Ok(()) => Ok(()),
            Err(FormatError::Io(e)) => Err(e),
            Err(e) => {
                refused = Some(e);
                Err(std::io::Error::other("refused"))
            }
        });
    if let Some(e) = refused {
        return Err(e);
    }
    written.map_err(|e| FormatError::File {
        path: e.path,
        error: e.error,
    })
}

/// What writing `history` in `format` would lose without changing which write any read
/// observes (values, timestamps, key names, empty transactions, aborted transactions…), one
/// sentence each; empty when reading the output back gives the same content
/// ([`History::same_content`]). Problems that make writing fail are not listed here.
pub fn conversion_notes(history: &History, format: Format) -> Vec<String> {
    let mut notes = format_notes(history, format);
    let known = history.known_write_order().len();
    if known > 0 && format != Format::Json {
        notes.push(format!(
            "{format} cannot carry the known write order; its {known} write-write fact(s) are \
             dropped (checking the output may find fewer anomalies)"
        ));
    }
    let observed = history.observed_anomalies();
    if !observed.is_empty() {
        let mut names: Vec<&str> = observed.iter().map(|a| a.name).collect();
        names.dedup();
        notes.push(format!(
            "{format} cannot carry the {} anomaly(ies) observed in the input's reads ({}); \
             checking the output will not see them",
            observed.len(),
            names.join(", ")
        ));
    }
    notes
}

/// What writing `history` in `format` would change in its *meaning* — what an isolation
/// check of the output could conclude differently — one sentence each; empty when the
/// conversion keeps it. `convert` refuses such a conversion unless told it may lose (`--lossy`).
/// Counted: the known write order (only the native JSON carries it: dropping it can hide
/// anomalies); reads of aborted transactions' writes in formats without aborted transactions
/// (awdit, isopredict: the aborted read disappears); and, in awdit, which has no initial
/// state, initial writes that are read (they become a session of their own, which a level
/// need not order before the others, so a violation can disappear).
pub fn conversion_losses(history: &History, format: Format) -> Vec<String> {
    let mut losses = Vec::new();
    let known = history.known_write_order().len();
    if known > 0 && format != Format::Json {
        losses.push(format!(
            "{format} cannot carry the known write order: its {known} write-write fact(s) \
             would be dropped, and checking the output may find fewer anomalies"
        ));
    }
    let locked = history.locked_reads().len();
    if locked > 0 && format != Format::Json {
        losses.push(format!(
            "{format} cannot mark locked reads: {locked} read(s) of single-statement \
             read-modify-writes would become ordinary reads, and prediction may then split them \
             (lost updates a locking database never gives)"
        ));
    }
    let after = history.sessions_after().len();
    if after > 0 && format != Format::Json {
        losses.push(format!(
            "{format} cannot order sessions: {after} fact(s) \"this session began after that \
             one ended\" would be dropped, and prediction may then have a session read around \
             what an earlier one wrote"
        ));
    }
    if history.sessions_are_connections() && format != Format::Json {
        losses.push(format!(
            "{format} cannot say that each session is one database connection: prediction may \
             then have a transaction miss what an earlier transaction of its own session wrote \
             or saw (executions a real database never gives)"
        ));
    }
    if matches!(format, Format::Awdit | Format::IsoPredict) {
        let aborted_reads = (0..history.ops().len() as history::OpId)
            .filter(|&o| {
                history.ops()[o as usize].kind == history::OpKind::Read
                    && history.txn(history.ops()[o as usize].txn).is_committed()
                    && history
                        .writer_txn(o)
                        .is_some_and(|w| !history.txn(w).is_committed())
            })
            .count();
        if aborted_reads > 0 {
            losses.push(format!(
                "{format} has no aborted transactions: {aborted_reads} read(s) of an aborted \
                 transaction's write (aborted reads) would be lost"
            ));
        }
    }
    if format == Format::Awdit {
        let initial = awdit::materialized_initial_writes(history).len();
        if initial > 0 {
            losses.push(format!(
                "awdit has no initial state: {initial} initial write(s) would become a session \
                 of their own, which an isolation level need not order before the other \
                 transactions (a violation of the input can be consistent in the output)"
            ));
        }
    }
    losses
}

fn format_notes(history: &History, format: Format) -> Vec<String> {
    match format {
        Format::Json => Vec::new(),
        Format::IsoPredict => isopredict::notes(history),
        Format::Plume => plume::notes(history),
        Format::Awdit => awdit::notes(history),
        Format::Dbcop => dbcop::notes(history),
        Format::DbcopText => dbcop_text::notes(history),
        Format::DbcopBincode => dbcop_bincode::notes(history),
        Format::Elle | Format::ElleJson => elle::notes(history, format),
        Format::Cobra => cobra::notes(history),
        Format::Viper => viper::notes(history),
        Format::TimeKiller => timekiller::notes(history),
        Format::Events => events::notes(history),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
            assert_eq!(f.to_string(), f.name());
            let v = <Format as clap::ValueEnum>::to_possible_value(&f).unwrap();
            assert_eq!(v.get_name(), f.name());
        }
        assert!("dbcop2".parse::<Format>().is_err());
        assert_eq!(
            Format::from_extension(Path::new("h.edn")),
            Some(Format::Elle)
        );
        assert_eq!(
            Format::from_extension(Path::new("a/b.JSON")),
            Some(Format::Json)
        );
        assert_eq!(Format::from_extension(Path::new("b.txt")), None);
    }

    #[test]
    fn detection() {
        assert_eq!(detect("\n# comment\n  {\"format\": 1}"), Some(Format::Json));
        assert_eq!(detect("\u{feff}r(1,2,3,4)\n"), Some(Format::Plume));
        assert_eq!(detect("w (1,2,3,4)"), Some(Format::Plume));
        assert_eq!(detect("WRITE KEY[x] Txn(0, 0)"), Some(Format::IsoPredict));
        assert_eq!(
            detect("\n\nCONTAINS[1] in Set[2] From(0, 0) Txn(1, 0)"),
            Some(Format::IsoPredict)
        );
        assert_eq!(detect("# c\nr 1 2\n"), Some(Format::Awdit));
        assert_eq!(detect("-----\nw 1 2"), Some(Format::Awdit));
        assert_eq!(detect("====="), Some(Format::Awdit));
        assert_eq!(detect("hello"), None);
        assert_eq!(detect("\n  \n# only comments\n"), None);
        let e = read_str("\n\nhello\n", "f.txt", None).unwrap_err();
        assert_eq!(e.line(), 3);
        assert!(e.to_string().starts_with("f.txt:3: unknown format"), "{e}");
        assert_eq!(read_str("", "e", None).unwrap_err().line(), 0);
    }
}
