//! Ctrl-C during an engine call: while a request is in flight, during a retry's backoff or a
//! server's `Retry-After`, between requests.
//!
//! In a Python process the interpreter's SIGINT handler only sets a flag that Python reads when
//! it next runs bytecode, which it does not while a Polars expression runs the engine: a call of
//! minutes could not be interrupted. The engines therefore put a handler of their own in front
//! of the one installed (the interpreter's, or the default), keeping its flags (CPython relies
//! on blocking calls returning `EINTR`, so no `SA_RESTART` is added). While an engine call runs
//! ([`arm`] to the drop of its [`Active`]), the first Ctrl-C is the engine's: no new request is
//! sent, the requests in flight are abandoned (each runs on a thread of its own that the engine
//! waits for in 50 ms slices, see `Transport::post`), waits stop, and the call fails with an
//! error saying so (replies received are cached). Outside engine calls, and at a second Ctrl-C,
//! the signal goes on to the previous handler, so Python raises `KeyboardInterrupt` and a
//! process without a handler ends, as they would have; a signal the kernel delivered to another
//! thread is first sent on to the main thread, so that Python's wakes from a blocking call. Every engine call polls the flag
//! ([`interrupted`]) between its steps, so a Ctrl-C it takes is always acted on.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Engine calls in progress now (over all threads).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// The error text of a call stopped by Ctrl-C.
pub const INTERRUPTED_MESSAGE: &str = "interrupted (Ctrl-C)";

/// How often a wait looks at the flag.
pub const SLICE: Duration = Duration::from_millis(50);

/// An engine call in progress, from [`arm`] until dropped: the first Ctrl-C meanwhile is the
/// engine's.
#[must_use = "the engine's claim on Ctrl-C ends when this is dropped"]
pub struct Active(());

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Called when an engine call starts: installs the handler (once per process), forgets an
/// interrupt an earlier call has already reported, and claims Ctrl-C until the returned guard
/// is dropped.
pub fn arm() -> Active {
    #[cfg(unix)]
    unix::install();
    // A call starting while another runs must not wipe the interrupt that stops that one.
    if ACTIVE.fetch_add(1, Ordering::SeqCst) == 0 {
        INTERRUPTED.store(false, Ordering::SeqCst);
    }
    Active(())
}

/// Whether Ctrl-C came since the engine calls in progress started (never outside one: an
/// interrupt already reported is not seen again).
pub fn interrupted() -> bool {
    ACTIVE.load(Ordering::SeqCst) > 0 && INTERRUPTED.load(Ordering::SeqCst)
}

/// Sleeps `duration`, or until Ctrl-C: an [`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted)
/// error with [`INTERRUPTED_MESSAGE`] when interrupted.
pub fn sleep(duration: Duration) -> crate::Result<()> {
    sleep_unless(interrupted, duration)
}

fn sleep_unless(stop: impl Fn() -> bool, duration: Duration) -> crate::Result<()> {
    let end = Instant::now() + duration;
    loop {
        if stop() {
            return Err(crate::Error::new(
                crate::ErrorKind::Interrupted,
                INTERRUPTED_MESSAGE,
            ));
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
    use super::{ACTIVE, INTERRUPTED};
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
            // The previous handler's own flags are kept: CPython installs its handler without
            // SA_RESTART so that blocking calls return EINTR and Ctrl-C is seen at once.
            action.sa_flags =
                libc::SA_SIGINFO | (previous.sa_flags & (libc::SA_RESTART | libc::SA_ONSTACK));
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        });
    }

    /// Async-signal-safe: atomics, then the previous handler (or the default action) unless
    /// this is the first Ctrl-C during an engine call.
    extern "C" fn on_interrupt(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        if ACTIVE.load(Ordering::SeqCst) > 0 && !INTERRUPTED.swap(true, Ordering::SeqCst) {
            return;
        }
        // SAFETY: PREVIOUS is written once, before this handler is installed.
        let previous = unsafe { *std::ptr::addr_of!(PREVIOUS) };
        let Some(previous) = previous else { return };
        if previous.sa_sigaction != libc::SIG_DFL && passed_to_the_main_thread(signal) {
            return;
        }
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

    /// A Ctrl-C meant for the process may be delivered to any of its threads (the engine's
    /// request threads, a thread pool's, a server's). A handler such as CPython's only sets a
    /// flag that the main thread reads when it next runs: run on another thread, it leaves the
    /// main thread asleep in `time.sleep` or a blocking read, and Ctrl-C seems lost until that
    /// ends. So a signal taken on another thread is sent on to the main thread, whose blocking
    /// call then returns `EINTR` and whose handler runs there. `true` when it was sent on.
    #[cfg(target_os = "linux")]
    fn passed_to_the_main_thread(signal: libc::c_int) -> bool {
        // Async-signal-safe: two syscalls; errno is kept for the code the signal interrupted.
        unsafe {
            let errno = *libc::__errno_location();
            let process = libc::getpid();
            let thread = libc::syscall(libc::SYS_gettid) as libc::pid_t;
            let sent =
                thread != process && libc::syscall(libc::SYS_tgkill, process, process, signal) == 0;
            *libc::__errno_location() = errno;
            sent
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn passed_to_the_main_thread(_signal: libc::c_int) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_early_at_an_interrupt() {
        let flag = AtomicBool::new(false);
        let stop = || flag.load(Ordering::SeqCst);
        assert!(sleep_unless(stop, Duration::from_millis(10)).is_ok());
        flag.store(true, Ordering::SeqCst);
        let started = Instant::now();
        assert_eq!(
            sleep_unless(stop, Duration::from_secs(60))
                .unwrap_err()
                .to_string(),
            INTERRUPTED_MESSAGE
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
