//! What the decision core judges: a history, and — when the input carries the database's
//! timestamps — its timestamped view for the timestamp checker. Reading a file into one is
//! the only file-reading path of the commands that judge histories (`check` on one file, on
//! many, on a folder).

use std::borrow::Cow;
use std::path::Path;
use std::sync::OnceLock;

use crate::error::InputError;
use crate::formats::{self, timekiller, Format};
use crate::history::timestamped::TimestampedHistory;
use crate::history::History;

/// A history to judge, with its timestamped view when the input has database timestamps.
///
/// A TimeKiller file is read straight into the timestamped view (it keeps list values whole
/// and negative values, which the history model does not); its [`History`] is built only if
/// a verdict needs it.
#[derive(Debug)]
pub struct Input<'h> {
    history: OnceLock<Result<Cow<'h, History>, InputError>>,
    timestamped: Option<TimestampedHistory>,
    source: String,
}

impl<'h> Input<'h> {
    /// A history already read (its timestamps, if it has them for every committed
    /// transaction, give the timestamped view).
    pub fn new(history: Cow<'h, History>) -> Result<Input<'h>, InputError> {
        let timestamped = TimestampedHistory::from_history(&history)?;
        Ok(Input {
            source: history.source().to_string(),
            history: OnceLock::from(Ok(history)),
            timestamped,
        })
    }

    /// A borrowed history (see [`Input::new`]).
    pub fn of(history: &'h History) -> Result<Input<'h>, InputError> {
        Input::new(Cow::Borrowed(history))
    }

    /// A timestamped history (its [`History`] view is built on first use).
    pub fn from_timestamped(timestamped: TimestampedHistory) -> Input<'static> {
        Input {
            source: timestamped.source.clone(),
            history: OnceLock::new(),
            timestamped: Some(timestamped),
        }
    }

    /// The input's name.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The history (built from the timestamped view the first time it is asked for).
    pub fn history(&self) -> Result<&History, InputError> {
        let built = self.history.get_or_init(|| {
            let t = self
                .timestamped
                .as_ref()
                .expect("an input without a history has a timestamped view");
            timekiller::to_history(t).map(Cow::Owned)
        });
        match built {
            Ok(h) => Ok(h),
            Err(e) => Err(e.clone()),
        }
    }

    /// The history if it is already built (always, unless the input was read as a
    /// timestamped file and no verdict needed its history yet).
    pub fn history_if_built(&self) -> Option<&History> {
        match self.history.get() {
            Some(Ok(h)) => Some(h),
            _ => None,
        }
    }

    /// The timestamped view, when the input carries database timestamps.
    pub fn timestamped(&self) -> Option<&TimestampedHistory> {
        self.timestamped.as_ref()
    }
}

/// How to read a file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// The format; `None` detects it.
    pub format: Option<Format>,
    /// TimeKiller's initial value of every key (`None` = `null`, TimeKiller's default).
    pub initial_value: Option<i64>,
    /// Whether the initial value was given (`--initial-value`, even `null`). TimeKiller input
    /// whose reads show it was most likely another value
    /// ([`timekiller::initial_value_hint`]) is refused unless it was given: judged with
    /// `null`, every level would be violated by reads of a value nothing writes.
    pub initial_value_given: bool,
}

/// Reads a history file, a folder holding one history (Cobra, Viper, dbcop bincode), or
/// standard input (`-`), and returns it with its format.
pub fn read_input(
    path: &Path,
    options: ReadOptions,
) -> Result<(Input<'static>, Format), InputError> {
    if path != Path::new("-") && path.is_dir() {
        let (history, format) = formats::read_path(path, options.format)?;
        return Ok((Input::new(Cow::Owned(history))?, format));
    }
    // A file: its bytes once; TimeKiller into its timestamped view, the rest into a history.
    let (bytes, source) = formats::read_file_bytes(path)?;
    let format = match options.format.or_else(|| formats::detect(&bytes)) {
        Some(f) => f,
        // Let the reader word the error.
        None => {
            formats::read_bytes(&bytes, &source, None)?;
            Format::Json
        }
    };
    if format == Format::TimeKiller {
        let t = timekiller::read_timestamped(&bytes, &source, options.initial_value)?;
        if !options.initial_value_given {
            if let Some(hint) = timekiller::initial_value_hint(&t) {
                return Err(InputError::new(
                    source,
                    0,
                    format!(
                        "cannot judge without the initial value: {hint} (or with \
                         --initial-value null to judge it as written)"
                    ),
                ));
            }
        }
        drop(bytes);
        return Ok((Input::from_timestamped(t), format));
    }
    let history = formats::read_bytes(&bytes, &source, Some(format))?;
    drop(bytes);
    Ok((Input::new(Cow::Owned(history))?, format))
}
