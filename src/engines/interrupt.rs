//! Ctrl-C during an engine's wait (a retry's backoff, a server's `Retry-After`).
//!
//! In a Python process the interpreter's SIGINT handler only sets a flag that Python reads when
//! it next runs bytecode, which it does not while a Polars expression runs the engine: a wait of
//! minutes could not be interrupted. The engines therefore chain a handler of their own in front
//! of the one installed (the interpreter's, or the default): it records the interrupt for the
//! engines, then hands the signal on, so Python still raises `KeyboardInterrupt` once the call
//! returns, and a process without a handler still ends as it would have. Waits sleep in short
//! slices and stop at the interrupt; the interrupted call fails with an error saying so.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The error text of a call stopped by Ctrl-C.
pub const INTERRUPTED_MESSAGE: &str = "interrupted (Ctrl-C)";

/// Installs the handler (once per process) and forgets an interrupt that an earlier call
/// already reported: called when an engine call starts.
pub fn arm() {
    #[cfg(unix)]
    unix::install();
    INTERRUPTED.store(false, Ordering::SeqCst);
}

/// Whether Ctrl-C came since the current call started.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Sleeps `duration`, or until Ctrl-C: `Err` with [`INTERRUPTED_MESSAGE`] when interrupted.
pub fn sleep(duration: Duration) -> Result<(), String> {
    sleep_unless(&INTERRUPTED, duration)
}

fn sleep_unless(flag: &AtomicBool, duration: Duration) -> Result<(), String> {
    const SLICE: Duration = Duration::from_millis(50);
    let end = Instant::now() + duration;
    loop {
        if flag.load(Ordering::SeqCst) {
            return Err(INTERRUPTED_MESSAGE.to_string());
        }
        let now = Instant::now();
        if now >= end {
            return Ok(());
        }
        std::thread::sleep(SLICE.min(end - now));
    }
}

#[cfg(unix)]
mod unix {
    use super::INTERRUPTED;
    use std::sync::atomic::Ordering;
    use std::sync::Once;

    /// The disposition found when the handler was installed, called after recording.
    static mut PREVIOUS: Option<libc::sigaction> = None;

    pub fn install() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| unsafe {
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut previous) != 0 {
                return;
            }
            // A process that ignores Ctrl-C keeps ignoring it.
            if previous.sa_sigaction == libc::SIG_IGN {
                return;
            }
            PREVIOUS = Some(previous);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_interrupt as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        });
    }

    /// Async-signal-safe: an atomic store, then the previous handler (or the default action).
    extern "C" fn on_interrupt(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        INTERRUPTED.store(true, Ordering::SeqCst);
        // SAFETY: PREVIOUS is written once, before this handler is installed.
        let previous = unsafe { *std::ptr::addr_of!(PREVIOUS) };
        let Some(previous) = previous else { return };
        unsafe {
            if previous.sa_sigaction == libc::SIG_DFL {
                // No handler before ours: end the process as Ctrl-C would have.
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            } else if previous.sa_flags & libc::SA_SIGINFO != 0 {
                let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    std::mem::transmute(previous.sa_sigaction);
                handler(signal, info, context);
            } else {
                let handler: extern "C" fn(libc::c_int) =
                    std::mem::transmute(previous.sa_sigaction);
                handler(signal);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_early_at_an_interrupt() {
        let flag = AtomicBool::new(false);
        assert!(sleep_unless(&flag, Duration::from_millis(10)).is_ok());
        flag.store(true, Ordering::SeqCst);
        let started = Instant::now();
        assert_eq!(
            sleep_unless(&flag, Duration::from_secs(60)).unwrap_err(),
            INTERRUPTED_MESSAGE
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
