//! Progress of a long `mine`: an indicatif bar on a terminal, plain periodic lines otherwise.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Reports files and drawers per second while mining.
pub struct MineProgress {
    bar: Option<ProgressBar>,
    started: Instant,
    last_line: Instant,
    total_files: u64,
    files: u64,
    drawers: u64,
    quiet: bool,
}

impl MineProgress {
    /// A reporter for `total_files` files; `quiet` silences it.
    pub fn new(total_files: u64, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total_files), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} mining [{bar:30}] {pos}/{len} files  {msg}  {elapsed_precise}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar
        });
        MineProgress {
            bar,
            started: Instant::now(),
            last_line: Instant::now(),
            total_files,
            files: 0,
            drawers: 0,
            quiet,
        }
    }

    /// Records finished files and filed drawers.
    pub fn advance(&mut self, files: u64, drawers: u64) {
        self.files += files;
        self.drawers += drawers;
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let rate = format!(
            "{} drawers  {:.1} files/s  {:.1} drawers/s",
            self.drawers,
            self.files as f64 / secs,
            self.drawers as f64 / secs
        );
        if let Some(bar) = &self.bar {
            bar.set_position(self.files);
            bar.set_message(rate);
        } else if !self.quiet && self.last_line.elapsed() >= Duration::from_secs(2) {
            self.last_line = Instant::now();
            eprintln!("mining: {}/{} files, {rate}", self.files, self.total_files);
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Progress of a conversation mine: bytes of exports read (with an ETA), exchanges and
/// drawers filed.
pub struct ByteProgress {
    bar: Option<ProgressBar>,
    started: Instant,
    last_line: Instant,
    total_bytes: u64,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
    exchanges: u64,
    drawers: u64,
    quiet: bool,
}

impl ByteProgress {
    /// A reporter for `total_bytes`, reading the bytes done from `read`; `quiet` silences it.
    pub fn new(
        total_bytes: u64,
        quiet: bool,
        read: std::sync::Arc<std::sync::atomic::AtomicU64>,
    ) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} mining [{bar:30}] {bytes}/{total_bytes}  {msg}  eta {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar
        });
        ByteProgress {
            bar,
            started: Instant::now(),
            last_line: Instant::now(),
            total_bytes,
            read,
            exchanges: 0,
            drawers: 0,
            quiet,
        }
    }

    /// Records filed exchanges and drawers, and shows the bytes read so far.
    pub fn advance(&mut self, exchanges: u64, drawers: u64) {
        self.exchanges += exchanges;
        self.drawers += drawers;
        let read = self.read.load(std::sync::atomic::Ordering::Relaxed);
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let rate = format!(
            "{} exchanges  {} drawers  {:.0} exchanges/s",
            self.exchanges,
            self.drawers,
            self.exchanges as f64 / secs
        );
        if let Some(bar) = &self.bar {
            bar.set_position(read);
            bar.set_message(rate);
        } else if !self.quiet && self.last_line.elapsed() >= Duration::from_secs(2) {
            self.last_line = Instant::now();
            eprintln!(
                "mining: {:.1} of {:.1} MB read, {rate}",
                read as f64 / 1e6,
                self.total_bytes as f64 / 1e6
            );
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
