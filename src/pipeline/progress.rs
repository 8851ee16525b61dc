//! Progress lines on standard error, drawn by indicatif (the one progress drawer; `rank`'s bar
//! is indicatif's too): a line redrawn in place on a terminal, or, where standard error is not
//! a terminal (logs, CI, a pipe), the same line printed plainly once a period
//! ([`DEFAULT_PLAIN_PERIOD`], or what [`PROGRESS_ENV`] says), so long work is never silent
//! there. Nothing is shown before the first period (a second on a terminal), so short work
//! draws nothing; the global `--quiet` ([`silence`]) turns every progress line off.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle, TermLike};

/// The environment variable that sets the period of the plain progress lines printed when
/// standard error is not a terminal, in seconds (`ISOPREDICT_PROGRESS=1`: one a second, for
/// tests and logs; a fraction such as `0.05` is allowed; `0`: none). Unset: one every
/// [`DEFAULT_PLAIN_PERIOD`].
pub const PROGRESS_ENV: &str = "ISOPREDICT_PROGRESS";

/// How often a plain progress line is printed when standard error is not a terminal and
/// [`PROGRESS_ENV`] does not say otherwise.
pub const DEFAULT_PLAIN_PERIOD: Duration = Duration::from_secs(5);

/// How long work runs before its line appears on a terminal.
const QUIET_START: Duration = Duration::from_secs(1);

/// Set by the global `--quiet`: no progress line anywhere.
static SILENCED: AtomicBool = AtomicBool::new(false);

/// Turns every progress line off for the rest of the process (the global `--quiet`).
pub fn silence() {
    SILENCED.store(true, Ordering::Relaxed);
}

/// Where a progress line goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Drawn {
    /// Standard error is a terminal: the line is redrawn in place and erased at the end.
    Terminal,
    /// Standard error is not a terminal: plain lines, one per period (the first after one
    /// period).
    Plain(Duration),
}

impl Drawn {
    /// Where a progress line would go now (`None`: nowhere).
    pub(crate) fn now() -> Option<Drawn> {
        Drawn::choose(
            std::io::stderr().is_terminal(),
            SILENCED.load(Ordering::Relaxed),
            std::env::var(PROGRESS_ENV).ok().as_deref(),
        )
    }

    /// Where a progress line goes when standard error `terminal` or not, `quiet` was asked,
    /// and [`PROGRESS_ENV`] is `env`: a terminal draws in place; elsewhere plain lines every
    /// `env` seconds ([`DEFAULT_PLAIN_PERIOD`] when unset or not a number; none for `0`).
    pub(crate) fn choose(terminal: bool, quiet: bool, env: Option<&str>) -> Option<Drawn> {
        if quiet {
            return None;
        }
        if terminal {
            return Some(Drawn::Terminal);
        }
        let secs = env.and_then(|v| v.trim().parse::<f64>().ok());
        match secs {
            Some(s) if !(s.is_finite() && s > 0.0) => None,
            Some(s) => Some(Drawn::Plain(Duration::from_secs_f64(s.min(3600.0)))),
            None => Some(Drawn::Plain(DEFAULT_PLAIN_PERIOD)),
        }
    }

    /// Whether the line is printed plainly.
    pub(crate) fn is_plain(self) -> bool {
        matches!(self, Drawn::Plain(_))
    }
}

/// Standard error as indicatif sees a log: every drawing becomes one plain line (cursor moves
/// and clearing are dropped), and an empty drawing prints nothing.
#[derive(Debug)]
struct PlainLines {
    pending: std::sync::Mutex<String>,
}

impl PlainLines {
    fn emit(&self) {
        let mut pending = self.pending.lock().unwrap();
        let line = pending.trim();
        if !line.is_empty() {
            ewriteln!("{line}");
        }
        pending.clear();
    }
}

impl TermLike for PlainLines {
    fn width(&self) -> u16 {
        // Wide enough that no line wraps; the filler indicatif writes after it is trimmed.
        1000
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.pending.lock().unwrap().push_str(s);
        self.emit();
        Ok(())
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        if s != "\r" {
            self.pending.lock().unwrap().push_str(s);
        }
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        self.emit();
        Ok(())
    }
}

/// A progress line `line()` drawn by indicatif where `drawn` says: on a terminal redrawn every
/// `terminal_period` (blank during its first second), plainly once a period of
/// [`Drawn::Plain`] (the first after one period). End it with `finish_and_clear` (erased on a
/// terminal; nothing more printed plainly).
pub(crate) fn progress_line_bar(
    drawn: Drawn,
    terminal_period: Duration,
    line: impl Fn() -> String + Send + Sync + Clone + 'static,
) -> ProgressBar {
    let start = Instant::now();
    let quiet_start = match drawn {
        Drawn::Terminal => QUIET_START,
        Drawn::Plain(period) => period,
    };
    let style = ProgressStyle::with_template("{line}")
        .expect("a fixed template")
        .with_key(
            "line",
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                if start.elapsed() >= quiet_start {
                    let _ = w.write_str(&line());
                }
            },
        );
    let (target, period) = match drawn {
        Drawn::Terminal => (ProgressDrawTarget::stderr_with_hz(20), terminal_period),
        Drawn::Plain(period) => (
            ProgressDrawTarget::term_like_with_hz(
                Box::new(PlainLines {
                    pending: std::sync::Mutex::new(String::new()),
                }),
                20,
            ),
            period,
        ),
    };
    let bar = ProgressBar::with_draw_target(None, target).with_style(style);
    bar.enable_steady_tick(period);
    bar
}

/// The stage a command's work is in, shown by its [`Working`] line (`predicting`, …).
static STAGE: Mutex<&'static str> = Mutex::new("");

/// Progress lines of a more detailed kind (a grid's cells, a search's anomalies) running now:
/// while one runs, the [`Working`] line is blank, so a log gets one line per period.
static DETAILED: AtomicUsize = AtomicUsize::new(0);

/// Names the stage the current command is in, for its [`Working`] line.
pub fn stage(name: &'static str) {
    *STAGE.lock().unwrap_or_else(|e| e.into_inner()) = name;
}

/// Marks a detailed progress line as running until the guard is dropped.
pub(crate) struct DetailedLine;

impl DetailedLine {
    pub(crate) fn begin() -> DetailedLine {
        DETAILED.fetch_add(1, Ordering::Relaxed);
        DetailedLine
    }
}

impl Drop for DetailedLine {
    fn drop(&mut self) {
        DETAILED.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The plain line of a command at work: `run tpcc: predicting … (12 s)` (`what: stage …
/// (elapsed)`; `what … (elapsed)` before a stage is named).
pub fn working_line(what: &str, stage: &str, elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if stage.is_empty() {
        format!("{what} … ({secs} s)")
    } else {
        format!("{what}: {stage} … ({secs} s)")
    }
}

/// A command's plain progress line on a standard error that is not a terminal: what it does,
/// its stage ([`stage`]) and how long it has run, once a period ([`Drawn::Plain`]), so long
/// work (`check --level all` on a million events, `run tpcc`) is not silent in a log. On a
/// terminal nothing (the detailed lines draw there); blank while a detailed line runs.
pub struct Working {
    bar: ProgressBar,
}

impl Working {
    /// Starts the line for `what` (e.g. `run tpcc`); `None` on a terminal, with `--quiet`, or
    /// with [`PROGRESS_ENV`] `0`.
    pub fn start(what: String) -> Option<Working> {
        let drawn = Drawn::now()?;
        if !drawn.is_plain() {
            return None;
        }
        stage("");
        let start = Instant::now();
        let line = move || {
            if DETAILED.load(Ordering::Relaxed) > 0 {
                return String::new();
            }
            let stage = *STAGE.lock().unwrap_or_else(|e| e.into_inner());
            working_line(&what, stage, start.elapsed())
        };
        Some(Working {
            bar: progress_line_bar(drawn, Duration::from_secs(1), line),
        })
    }
}

impl Drop for Working {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35 item 17: plain lines on a non-terminal by default (every few seconds), at the
    /// period the environment gives, none with `--quiet` or `0`; a terminal draws in place.
    #[test]
    fn plain_lines_unless_quiet() {
        assert_eq!(
            Drawn::choose(false, false, None),
            Some(Drawn::Plain(DEFAULT_PLAIN_PERIOD))
        );
        assert!(DEFAULT_PLAIN_PERIOD >= Duration::from_secs(2));
        assert_eq!(
            Drawn::choose(false, false, Some("1")),
            Some(Drawn::Plain(Duration::from_secs(1)))
        );
        assert_eq!(
            Drawn::choose(false, false, Some("0.05")),
            Some(Drawn::Plain(Duration::from_millis(50)))
        );
        assert_eq!(Drawn::choose(false, false, Some("0")), None);
        assert_eq!(
            Drawn::choose(false, false, Some("yes")),
            Some(Drawn::Plain(DEFAULT_PLAIN_PERIOD))
        );
        assert_eq!(Drawn::choose(true, false, None), Some(Drawn::Terminal));
        for terminal in [false, true] {
            assert_eq!(Drawn::choose(terminal, true, Some("1")), None);
        }
    }

    #[test]
    fn the_working_line_names_the_stage() {
        let d = Duration::from_millis(12_400);
        assert_eq!(
            working_line("run tpcc", "predicting", d),
            "run tpcc: predicting … (12 s)"
        );
        assert_eq!(working_line("check h.json", "", d), "check h.json … (12 s)");
    }
}
