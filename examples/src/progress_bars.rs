//! Long work's progress on the terminal: an indicatif bar when stderr is a terminal, a plain
//! line every two seconds otherwise, nothing when quiet. The work itself only sends
//! `mempalace::ingest::progress` events.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mempalace::ingest::progress::{Progress, ProgressEvent, Work};

/// Renders progress events on stderr.
pub struct TerminalProgress {
    quiet: bool,
    state: Mutex<State>,
}

/// What the renderer has seen so far.
struct State {
    bar: Option<ProgressBar>,
    work: Work,
    total: u64,
    started: Instant,
    last_line: Instant,
}

impl TerminalProgress {
    /// A renderer; `quiet` silences it.
    pub fn new(quiet: bool) -> Self {
        TerminalProgress {
            quiet,
            state: Mutex::new(State {
                bar: None,
                work: Work::Files,
                total: 0,
                started: Instant::now(),
                last_line: Instant::now(),
            }),
        }
    }
}

/// The bar's layout for a kind of work.
fn template(work: Work) -> &'static str {
    match work {
        Work::Files => "{spinner} mining [{bar:30}] {pos}/{len} files  {msg}  {elapsed_precise}",
        Work::Bytes => "{spinner} mining [{bar:30}] {bytes}/{total_bytes}  {msg}  eta {eta}",
        Work::Drawers => {
            "{spinner} migrating [{bar:30}] {pos}/{len} drawers  {msg}  {elapsed_precise}"
        }
    }
}

/// How far, in words: "3/10 files", "1.2 of 40.0 MB read", "64/200 drawers".
fn position(work: Work, done: u64, total: u64) -> String {
    match work {
        Work::Files => format!("{done}/{total} files"),
        Work::Bytes => format!(
            "{:.1} of {:.1} MB read",
            done as f64 / 1e6,
            total as f64 / 1e6
        ),
        Work::Drawers => format!("{done}/{total} drawers"),
    }
}

impl Progress for TerminalProgress {
    fn event(&self, event: ProgressEvent<'_>) {
        if self.quiet {
            return;
        }
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        match event {
            ProgressEvent::Started { work, total } => {
                state.work = work;
                state.total = total;
                state.started = Instant::now();
                state.last_line = Instant::now();
                state.bar = std::io::stderr().is_terminal().then(|| {
                    let bar =
                        ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
                    bar.set_style(
                        ProgressStyle::with_template(template(work))
                            .unwrap_or_else(|_| ProgressStyle::default_bar())
                            .progress_chars("=> "),
                    );
                    bar
                });
            }
            ProgressEvent::Advanced {
                done,
                drawers_filed,
            } => {
                let secs = state.started.elapsed().as_secs_f64().max(1e-3);
                let rate = format!(
                    "{drawers_filed} drawers  {:.1} drawers/s",
                    drawers_filed as f64 / secs
                );
                if let Some(bar) = &state.bar {
                    bar.set_position(done);
                    bar.set_message(rate);
                } else if state.last_line.elapsed() >= Duration::from_secs(2) {
                    state.last_line = Instant::now();
                    eprintln!(
                        "mining: {}, {rate}",
                        position(state.work, done, state.total)
                    );
                }
            }
            ProgressEvent::Skipped { .. } | ProgressEvent::Failed { .. } => {}
            ProgressEvent::Finished => {
                if let Some(bar) = state.bar.take() {
                    bar.finish_and_clear();
                }
            }
        }
    }
}
