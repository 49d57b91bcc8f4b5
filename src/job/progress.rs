//! The progress line of long jobs: judge calls and texts embedded so far, their rate and the
//! time left, redrawn on stderr while the engines work (read from their counters, so scoring
//! itself pays nothing for it). Shown when stderr is a terminal; `--progress always` writes it
//! as plain lines (logs), `--quiet` / `--progress never` turns it off.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::engines::progress::{Progress, Snapshot, Work};

/// When the progress line is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ProgressMode {
    /// On a terminal only.
    #[default]
    Auto,
    /// Always (plain lines, every few seconds, when stderr is not a terminal).
    Always,
    /// Never.
    Never,
}

/// The line, drawn by a background thread until dropped.
pub struct ProgressLine {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ProgressLine {
    /// Starts drawing (or does nothing, per `mode` and stderr).
    pub fn start(mode: ProgressMode) -> ProgressLine {
        let terminal = std::io::stderr().is_terminal();
        let stop = Arc::new(AtomicBool::new(false));
        let draw = match mode {
            ProgressMode::Never => false,
            ProgressMode::Auto => terminal,
            ProgressMode::Always => true,
        };
        let thread = draw.then(|| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || ticker(&stop, terminal))
        });
        ProgressLine { stop, thread }
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn ticker(stop: &AtomicBool, terminal: bool) {
    let started = Instant::now();
    let judge_start = Progress::snapshot(Work::Judge);
    let embed_start = Progress::snapshot(Work::Embed);
    let rows_start = Progress::snapshot(Work::Rows);
    // A terminal line is redrawn often; plain lines (logs) every few seconds.
    let every = if terminal {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(5)
    };
    let mut last_drawn = Instant::now();
    let mut drawn = false;
    let mut stderr = std::io::stderr();
    loop {
        let finishing = stop.load(Ordering::Relaxed);
        if finishing || last_drawn.elapsed() >= every {
            let seconds = started.elapsed().as_secs_f64();
            let judge = Progress::snapshot(Work::Judge).since(&judge_start);
            let embed = Progress::snapshot(Work::Embed).since(&embed_start);
            let rows = Progress::snapshot(Work::Rows).since(&rows_start);
            if let Some(line) = line(rows, judge, embed, seconds) {
                let _ = if terminal {
                    write!(stderr, "\r{line}\x1b[K")
                } else {
                    writeln!(stderr, "{line}")
                };
                drawn = true;
            }
            last_drawn = Instant::now();
        }
        if finishing {
            if drawn && terminal {
                let _ = writeln!(stderr);
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The line for the work so far; `None` while there is none.
fn line(rows: Snapshot, judge: Snapshot, embed: Snapshot, seconds: f64) -> Option<String> {
    let mut parts = Vec::new();
    if rows.to_do > 0 {
        parts.push(rows_part(rows, seconds));
    }
    if judge.rows > 0 {
        parts.push(part("judge", "calls", judge, seconds));
    }
    if embed.rows > 0 {
        parts.push(part("embeddings", "texts", embed, seconds));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

fn part(what: &str, unit: &str, s: Snapshot, seconds: f64) -> String {
    let rate = if seconds > 0.0 {
        s.done as f64 / seconds
    } else {
        0.0
    };
    let left = s.to_do.saturating_sub(s.done);
    let eta = if left == 0 {
        "done".to_string()
    } else if rate > 0.0 {
        format!("ETA {}", clock(left as f64 / rate))
    } else {
        "ETA ?".to_string()
    };
    format!(
        "{what}: {}/{} {unit}, {} from the cache, {rate:.1} {unit}/s, {eta}",
        s.done, s.to_do, s.cached
    )
}

/// Rows scored out of the table's, the rate and the time left.
fn rows_part(s: Snapshot, seconds: f64) -> String {
    let rate = if seconds > 0.0 {
        s.done as f64 / seconds
    } else {
        0.0
    };
    let left = s.to_do.saturating_sub(s.done);
    let eta = match (left, rate > 0.0) {
        (0, _) => "done".to_string(),
        (_, true) => format!("ETA {}", clock(left as f64 / rate)),
        (_, false) => "ETA ?".to_string(),
    };
    format!("rows: {}/{}, {rate:.0} rows/s, {eta}", s.done, s.to_do)
}

fn clock(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_rates_and_time_left() {
        let judge = Snapshot {
            rows: 100,
            cached: 60,
            to_do: 40,
            done: 10,
        };
        let none = Snapshot::default();
        let text = line(none, judge, none, 5.0).unwrap();
        assert_eq!(
            text,
            "judge: 10/40 calls, 60 from the cache, 2.0 calls/s, ETA 15s"
        );
        assert_eq!(line(none, none, none, 1.0), None);
        let rows = Snapshot {
            rows: 1_000,
            cached: 0,
            to_do: 1_000,
            done: 250,
        };
        assert_eq!(
            line(rows, none, none, 5.0).unwrap(),
            "rows: 250/1000, 50 rows/s, ETA 15s"
        );
        assert_eq!(clock(3725.0), "1h02m");
        assert_eq!(clock(75.0), "1m15s");
    }
}
