//! Reading a history file's bytes: a file, a named pipe or standard input (`-`), bounded by
//! `ISOPREDICT_MAX_INPUT` (default 4 GiB); devices, folders and sockets are refused.

use std::io::Read;
use std::path::Path;

use crate::error::InputError;

/// The largest input read, in bytes, unless the environment variable `ISOPREDICT_MAX_INPUT`
/// says otherwise: 4 GiB.
const DEFAULT_MAX_INPUT: u64 = 4 << 30;

/// The input size bound: `ISOPREDICT_MAX_INPUT` (bytes) or [`DEFAULT_MAX_INPUT`].
fn max_input() -> u64 {
    std::env::var("ISOPREDICT_MAX_INPUT")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_MAX_INPUT)
}

/// Reads at most `limit` bytes from `reader`; more is an error naming `source`. `expected`:
/// the size the input is known to have (a file's), so that the buffer is allocated once.
fn read_bounded(
    reader: impl Read,
    source: &str,
    limit: u64,
    expected: u64,
) -> Result<Vec<u8>, InputError> {
    // One byte more than expected: reading to the end then needs no second allocation.
    let capacity = expected.min(limit).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::new(source, 0, e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(InputError::new(
            source,
            0,
            format!(
                "input larger than {limit} bytes (the bound; set ISOPREDICT_MAX_INPUT to change it)"
            ),
        ));
    }
    Ok(bytes)
}

/// Reads the bytes of a file, or of standard input for `-`, with the name errors give it.
/// Devices, folders and sockets are refused (a device such as `/dev/zero` never ends); files,
/// pipes and standard input are read up to the input bound (`ISOPREDICT_MAX_INPUT`, default
/// 4 GiB).
pub fn read_file_bytes(path: &Path) -> Result<(Vec<u8>, String), InputError> {
    let limit = max_input();
    if path == Path::new("-") {
        let bytes = read_bounded(std::io::stdin().lock(), "<stdin>", limit, 0)?;
        return Ok((bytes, "<stdin>".to_string()));
    }
    use std::os::unix::fs::FileTypeExt;
    let source = path.display().to_string();
    let fail = |e: std::io::Error| InputError::new(source.clone(), 0, e.to_string());
    let meta = std::fs::metadata(path).map_err(fail)?;
    let t = meta.file_type();
    if !t.is_file() && !t.is_fifo() {
        let what = if t.is_dir() {
            "a folder"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Err(InputError::new(
            source,
            0,
            format!("{what}, not a history file; refusing to read it"),
        ));
    }
    let expected = if t.is_file() { meta.len() } else { 0 };
    let bytes = read_bounded(
        std::fs::File::open(path).map_err(fail)?,
        &source,
        limit,
        expected,
    )?;
    Ok((bytes, source))
}
