//! Reading and writing histories in external formats, and detecting a format from content.
//!
//! One file per format, each reading and writing (docs/formats.md describes them all):
//! - [`json`]: the native, versioned JSON schema; carries everything a [`History`] has.
//! - [`isopredict`]: traces of the IsoPredict artifact (PLDI'24), `WRITE KEY[k] Txn(s, i)` …
//! - [`plume`]: Plume/PolySI text, `r(k,v,s,t)` / `w(k,v,s,t)`.
//! - [`awdit`]: the AWDIT test format, `r k v` / `w k v` with `-----` and `=====` separators.
//! - [`events`]: JSON lines, one event (begin/read/write/commit/abort) per line, what an
//!   application records itself (docs/recording.md).
//!
//! Reading never panics: malformed input gives an [`InputError`] naming the file, the line
//! and the problem. Writing refuses ([`FormatError::Unrepresentable`]) a history whose
//! write–read relation the format cannot express; [`conversion_notes`] lists what a format
//! drops without changing which write each read observes (values, timestamps, …).

pub mod awdit;
mod common;
pub mod events;
pub mod isopredict;
pub mod json;
pub mod plume;
mod text;

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::InputError;
use crate::history::History;

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
    /// JSON lines, one event per line (an application's own recording).
    #[value(name = "jsonl")]
    Events,
}

impl Format {
    /// Every format, in the order of the formats table.
    pub const ALL: [Format; 5] = [
        Format::Json,
        Format::IsoPredict,
        Format::Plume,
        Format::Awdit,
        Format::Events,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::IsoPredict => "isopredict",
            Format::Plume => "plume",
            Format::Awdit => "awdit",
            Format::Events => "jsonl",
        }
    }

    /// The format a file extension names (`json`, `isopredict`, `plume`, `awdit`), if any.
    /// `.txt` names none: all three text formats use it.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
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
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
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

/// Detects the format from the content: the first line that is neither blank nor a `#`
/// comment decides (a JSON object with an `event` field → jsonl; other `{` → json; `r(`/`w(` → plume; `WRITE KEY[`, `READ KEY[`, `INSERT[`,
/// `CONTAINS[`, `DELETE[` → isopredict; `r `/`w ` or a line of `-`/`=` → awdit). `None` when
/// no line decides.
pub fn detect(text: impl AsRef<[u8]>) -> Option<Format> {
    detect_with_line(text.as_ref()).0
}

/// The detected format and the line that decided (or the first significant line, or 0).
fn detect_with_line(bytes: &[u8]) -> (Option<Format>, u32) {
    for (line_no, line) in text::Lines::new(text::strip_bom(bytes)) {
        let line = text::trim(line);
        if text::is_blank_or_comment(line) {
            continue;
        }
        return (detect_line(line), line_no);
    }
    (None, 0)
}

fn detect_line(line: &[u8]) -> Option<Format> {
    if events::looks_like(line) {
        return Some(Format::Events);
    }
    if line[0] == b'{' {
        return Some(Format::Json);
    }
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
                    "unknown format: expected `{\"event\": …}` lines (jsonl), `{` (json), `r(`/`w(` (plume), \
                     `WRITE KEY[`/`READ KEY[`/`INSERT[`/`CONTAINS[`/`DELETE[` (isopredict) \
                     or `r `/`w `/`---`/`===` (awdit)",
                ))
            }
        },
    };
    let bytes = text::strip_bom(bytes);
    match format {
        Format::Json => json::read(bytes, source),
        Format::IsoPredict => isopredict::read(bytes, source),
        Format::Plume => plume::read(bytes, source),
        Format::Awdit => awdit::read(bytes, source),
        Format::Events => events::read(bytes, source),
    }
}

/// Reads a history from text; `source` names the input in errors. `None` detects the format.
pub fn read_str(text: &str, source: &str, format: Option<Format>) -> Result<History, InputError> {
    read_bytes(text.as_bytes(), source, format)
}

/// Reads a history from a file. `None` detects the format. I/O errors become an
/// [`InputError`] at line 0.
pub fn read_file(path: &Path, format: Option<Format>) -> Result<History, InputError> {
    let source = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| InputError::new(source.clone(), 0, e.to_string()))?;
    read_bytes(&bytes, &source, format)
}

/// Writes a history in `format`.
pub fn write_to(history: &History, format: Format, out: &mut dyn Write) -> Result<(), FormatError> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    match format {
        Format::Json => json::write(history, &mut out)?,
        Format::IsoPredict => isopredict::write(history, &mut out)?,
        Format::Plume => plume::write(history, &mut out)?,
        Format::Awdit => awdit::write(history, &mut out)?,
        Format::Events => events::write(history, &mut out)?,
    }
    out.flush()?;
    Ok(())
}

/// Writes a history to a file in `format`.
pub fn write_file(history: &History, path: &Path, format: Format) -> Result<(), FormatError> {
    let file_error = |source| FormatError::File {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::create(path).map_err(file_error)?;
    let result = match write_to(history, format, &mut file) {
        Err(FormatError::Io(e)) => Err(file_error(e)),
        other => other,
    };
    if result.is_err() {
        // Leave no partial file behind.
        drop(file);
        let _ = std::fs::remove_file(path);
    }
    result
}

/// What writing `history` in `format` would lose without changing which write any read
/// observes (values, timestamps, key names, empty transactions, aborted transactions…), one
/// sentence each; empty when reading the output back gives the same content
/// ([`History::same_content`]). Problems that make writing fail are not listed here.
pub fn conversion_notes(history: &History, format: Format) -> Vec<String> {
    match format {
        Format::Json => Vec::new(),
        Format::IsoPredict => isopredict::notes(history),
        Format::Plume => plume::notes(history),
        Format::Awdit => awdit::notes(history),
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
        assert!("dbcop".parse::<Format>().is_err());
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
