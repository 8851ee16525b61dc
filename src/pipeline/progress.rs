//! Progress lines on standard error, drawn by indicatif (the one progress drawer; `rank`'s bar
//! is indicatif's too): a line redrawn in place on a terminal, or, where standard error is not
//! a terminal and [`PROGRESS_ENV`] asks for it (logs and tests), the same line printed plainly
//! once a period. Nothing is shown during the first second, so short work draws nothing.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle, TermLike};

/// The environment variable that asks for progress lines when standard error is not a
/// terminal (`ISOPREDICT_PROGRESS=1`): one plain line per period instead of a line redrawn in
/// place. For tests and logs; without it nothing is printed there.
pub const PROGRESS_ENV: &str = "ISOPREDICT_PROGRESS";

/// How long work runs before its line appears.
const QUIET_START: Duration = Duration::from_secs(1);

/// Where a progress line goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Drawn {
    /// Standard error is a terminal: the line is redrawn in place and erased at the end.
    Terminal,
    /// Standard error is not a terminal and [`PROGRESS_ENV`] asks: plain lines.
    Plain,
}

impl Drawn {
    /// Where a progress line would go now (`None`: nowhere).
    pub(crate) fn now() -> Option<Drawn> {
        if std::io::stderr().is_terminal() {
            Some(Drawn::Terminal)
        } else if std::env::var_os(PROGRESS_ENV).is_some_and(|v| v == "1") {
            Some(Drawn::Plain)
        } else {
            None
        }
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
/// `terminal_period`, plainly every `plain_period`; blank during its first second. End it with
/// `finish_and_clear` (erased on a terminal; nothing more printed plainly).
pub(crate) fn progress_line_bar(
    drawn: Drawn,
    terminal_period: Duration,
    plain_period: Duration,
    line: impl Fn() -> String + Send + Sync + Clone + 'static,
) -> ProgressBar {
    let start = Instant::now();
    let style = ProgressStyle::with_template("{line}")
        .expect("a fixed template")
        .with_key(
            "line",
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                if start.elapsed() >= QUIET_START {
                    let _ = w.write_str(&line());
                }
            },
        );
    let (target, period) = match drawn {
        Drawn::Terminal => (ProgressDrawTarget::stderr_with_hz(20), terminal_period),
        Drawn::Plain => (
            ProgressDrawTarget::term_like_with_hz(
                Box::new(PlainLines {
                    pending: std::sync::Mutex::new(String::new()),
                }),
                20,
            ),
            plain_period,
        ),
    };
    let bar = ProgressBar::with_draw_target(None, target).with_style(style);
    bar.enable_steady_tick(period);
    bar
}
