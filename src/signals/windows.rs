//! The supervisor's one event source on Windows, on one thread: the console's control events
//! (Ctrl-C, Ctrl-Break, a closed console, a logoff or shutdown), which a handler registered
//! with `SetConsoleCtrlHandler` queues, and the running attempt's end (its process handle),
//! waited on together with one `WaitForMultipleObjects` and its time limit. See
//! <https://learn.microsoft.com/en-us/windows/console/setconsolectrlhandler> and
//! <https://learn.microsoft.com/en-us/windows/win32/api/synchapi/nf-synchapi-waitformultipleobjects>.
//!
//! Windows has no signals between processes: each event is given the C runtime's number of the
//! signal it stands for ([`crate::signal_names`]: INT, BREAK, HUP), so that the rest of retry
//! treats it as on Unix. The handler runs on a thread the system starts; it queues the event,
//! sets an auto-reset event object that wakes the loop, and returns at once, except for a closed
//! console, logoff or shutdown, after which the system ends retry as soon as the handler
//! returns: it then waits (at most 5 s, the system's own limit) for the run to end.

use std::collections::VecDeque;
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{FALSE, HANDLE, TRUE, WAIT_OBJECT_0};
use windows_sys::Win32::System::Console::{
    CTRL_BREAK_EVENT, CTRL_C_EVENT, CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT,
    SetConsoleCtrlHandler,
};
use windows_sys::Win32::System::Threading::{
    CreateEventW, INFINITE, SetEvent, WaitForMultipleObjects, WaitForSingleObject,
};
use windows_sys::core::BOOL;

use super::event::{Event, Ready};
use super::roles::is_stop;
use crate::process::Attempt;
use crate::signal_names::{BREAK, INTERRUPT};

/// A console's hangup (closed, logoff, shutdown): SIGHUP's number, as on Unix.
const HANGUP: i32 = 1;

/// What the handler and the I/O threads queued, and the event object that wakes the loop.
struct Queue {
    events: Mutex<VecDeque<Event>>,
    wake: OwnedHandle,
}

/// The one queue, made by [`Events::listen`].
static QUEUE: OnceLock<Queue> = OnceLock::new();
/// A stop event has arrived (it ends the run: the flag is never cleared).
static STOPPED: AtomicBool = AtomicBool::new(false);

/// The event loop's side: the queue, and the process handle of the child being watched.
#[derive(Debug)]
pub struct Events {
    child: std::cell::RefCell<Option<OwnedHandle>>,
}

impl Events {
    /// Makes the queue and registers the console control handler. Call before any other
    /// thread starts.
    ///
    /// # Errors
    /// When the event object cannot be made or the handler cannot be registered.
    pub fn listen() -> io::Result<Events> {
        if QUEUE.get().is_none() {
            // SAFETY: no security attributes, auto-reset, not signalled, no name.
            let raw = unsafe { CreateEventW(std::ptr::null(), FALSE, FALSE, std::ptr::null()) };
            if raw.is_null() {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a handle CreateEventW just returned, owned by nothing else.
            let wake = unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) };
            let _ = QUEUE.set(Queue {
                events: Mutex::new(VecDeque::new()),
                wake,
            });
        }
        // SAFETY: `handler` has the signature the system calls, for the life of the process.
        if unsafe { SetConsoleCtrlHandler(Some(handler), TRUE) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Events {
            child: std::cell::RefCell::new(None),
        })
    }

    /// Watches `child` (the running attempt or hook): its process handle wakes the wait when
    /// it ends.
    pub fn watch_child(&self, child: &Attempt) {
        *self.child.borrow_mut() = child.wait_handle();
    }

    /// Stops watching: call once the child is reaped.
    pub fn unwatch_child(&self) {
        *self.child.borrow_mut() = None;
    }

    /// The next event, waiting at most until `until` (`None`: no limit); `None` when that
    /// time came first. A queued event is returned even when `until` has already passed.
    pub fn wait(&self, until: Option<Instant>) -> Option<Event> {
        loop {
            if let Some(event) = self.try_next() {
                return Some(event);
            }
            let queue = QUEUE.get()?;
            let mut handles: Vec<HANDLE> = vec![queue.wake.as_raw_handle() as HANDLE];
            if let Some(child) = self.child.borrow().as_ref() {
                handles.push(child.as_raw_handle() as HANDLE);
            }
            let count = u32::try_from(handles.len()).unwrap_or(1);
            // SAFETY: `handles` holds valid handles that outlive the call.
            let woke = unsafe {
                WaitForMultipleObjects(count, handles.as_ptr(), FALSE, milliseconds(until))
            };
            if woke == WAIT_OBJECT_0 + 1 {
                return Some(self.try_next().unwrap_or(Event::Child));
            }
            if woke != WAIT_OBJECT_0 {
                // Timed out (or a failed wait: look at the child rather than spin).
                if until.is_some_and(|t| Instant::now() >= t) {
                    return self.try_next();
                }
                if woke != windows_sys::Win32::Foundation::WAIT_TIMEOUT {
                    return Some(Event::Child);
                }
            }
        }
    }

    /// The next queued event, without waiting.
    pub fn try_next(&self) -> Option<Event> {
        let queue = QUEUE.get()?;
        let event = queue
            .events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop_front();
        if let Some(Event::Signal { signal, .. }) = event
            && is_stop(signal)
        {
            STOPPED.store(true, Ordering::Release);
        }
        event
    }
}

/// The time left until `until` in whole milliseconds, rounded up, for a Win32 wait
/// (`INFINITE` for no limit; at most a day, and the loop waits again).
fn milliseconds(until: Option<Instant>) -> u32 {
    match until {
        None => INFINITE,
        Some(t) => {
            let left = t.saturating_duration_since(Instant::now());
            let ms = left.as_micros().div_ceil(1000).min(86_400_000);
            u32::try_from(ms).unwrap_or(86_400_000)
        }
    }
}

/// Queues `event` and wakes the loop.
fn push(event: Event) {
    if let Some(queue) = QUEUE.get() {
        queue
            .events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push_back(event);
        // SAFETY: the queue's event object lives as long as the process.
        unsafe { SetEvent(queue.wake.as_raw_handle() as HANDLE) };
    }
}

/// Wakes the event loop to look again (an I/O thread ended): a child event, which only ever
/// means "look again" to the supervisor.
pub fn wake() {
    push(Event::Child);
}

/// The console control handler: queues the event as its signal, always to be passed on
/// (`from_kernel` false). Ctrl-C never reaches an attempt in a process group of its own (Ctrl-C
/// is disabled there), and an event sent to retry's group alone (`GenerateConsoleCtrlEvent`, as
/// a CI runner or a parent stops it) does not reach the attempt's group either; a Ctrl-Break
/// typed on a shared console then reaches the attempt twice, which ends it as once does.
unsafe extern "system" fn handler(ctrl: u32) -> BOOL {
    let signal = match ctrl {
        CTRL_C_EVENT => INTERRUPT,
        CTRL_BREAK_EVENT => BREAK,
        CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT => HANGUP,
        _ => return FALSE,
    };
    let from_kernel = false;
    STOPPED.store(true, Ordering::Release);
    push(Event::Signal {
        signal,
        from_kernel,
    });
    if signal == HANGUP {
        // The system ends retry when this returns: give the run its chance to end first.
        std::thread::sleep(Duration::from_secs(5));
    }
    TRUE
}

/// Whether a stop event (Ctrl-C, Ctrl-Break, a closed console) has arrived, still queued for
/// the event loop or read by it already (either way the run is ending). Always `false` before
/// [`Events::listen`].
pub fn stop_arrived() -> bool {
    STOPPED.load(Ordering::Acquire)
}

/// Waits until `handle` is signalled (a process or thread ended), a stop event has arrived
/// ([`stop_arrived`]), or `until` passes (`None`: no time limit), whichever comes first; at
/// once [`Ready::Stop`] when one has arrived before. On Windows the one way retry waits for
/// another thread outside its event loop.
pub fn wait_ready(handle: RawHandle, until: Option<Instant>) -> Ready {
    const STEP: Duration = Duration::from_millis(20);
    loop {
        if stop_arrived() {
            return Ready::Stop;
        }
        let left = until.map(|t| t.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            return Ready::TimedOut;
        }
        let step = left.map_or(STEP, |l| l.min(STEP));
        let ms = u32::try_from(step.as_millis()).unwrap_or(20).max(1);
        // SAFETY: the caller's handle is valid for the call.
        if unsafe { WaitForSingleObject(handle as HANDLE, ms) } == WAIT_OBJECT_0 {
            return Ready::Ready;
        }
    }
}
