//! Windows process control behind the same interface as `unix.rs` and `launch.rs`: an attempt
//! starts suspended in a new process group (`CREATE_NEW_PROCESS_GROUP`), is put in a Job
//! Object of its own with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` before it runs a single
//! instruction, then resumed; everything it starts is in that job, which is how its whole tree
//! is found and ended (`TerminateJobObject`), and nothing outlives retry. A stop request is
//! `CTRL_BREAK_EVENT` to its process group. See
//! <https://learn.microsoft.com/en-us/windows/win32/procthread/job-objects>,
//! <https://learn.microsoft.com/en-us/windows/console/generateconsolectrlevent> and
//! <https://learn.microsoft.com/en-us/windows/win32/procthread/process-creation-flags>.
//!
//! The program is looked up as `cmd.exe` does (`lookup.rs`); a `.bat` or `.cmd` file runs
//! through `cmd.exe`, with std's quoting of its arguments for it.

use std::cell::{Cell, RefCell};
use std::ffi::OsString;
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::os::windows::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{ERROR_BAD_EXE_FORMAT, ERROR_FILENAME_EXCED_RANGE, HANDLE};
use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED, OpenThread, ResumeThread, THREAD_SUSPEND_RESUME,
};

use super::lookup::find_program;
use super::spawned::{GroupMode, LaunchError, Piped, Spawned};
use crate::signal_names::{BREAK, INTERRUPT, KILL};

/// How long, after retry terminated a job, it looks at the job's count of processes for them to
/// be gone; past it, what is still counted (Wine leaves a process caught being created counted
/// for good) is left to the job's handle, which ends it when the attempt is dropped.
const TERMINATION_WAIT: Duration = Duration::from_secs(2);

/// The longest command line Windows takes, in UTF-16 units (`CreateProcessW`).
const COMMAND_LINE_MAX: usize = 32_767;

/// The exit code every process of a terminated job gets: 137, the status a Unix shell gives a
/// death by KILL, which is what retry reports for it.
const TERMINATED: u32 = 137;

impl GroupMode {
    /// [`GroupMode::Own`], always on Windows: a process group of its own
    /// (`CREATE_NEW_PROCESS_GROUP`) is the one a console control event can be sent to alone.
    pub fn detect() -> GroupMode {
        GroupMode::Own
    }
}

/// How a reaped attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Exit code: all 32 bits of it (an access violation is 3221225477).
    Exited(u32),
    /// Ended by retry terminating its job: KILL's number ([`crate::signal_names::KILL`]).
    Signaled(i32),
}

/// A running attempt: its process, the job that holds its whole tree, and its status once
/// reaped.
#[derive(Debug)]
pub struct Attempt {
    child: RefCell<Child>,
    job: OwnedHandle,
    /// retry terminated the job: when it first did.
    terminated: Cell<Option<Instant>>,
}

impl Attempt {
    /// Its process id.
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.borrow().id()).unwrap_or(i32::MAX)
    }

    /// A handle to its process for the event loop to wait on (a duplicate, owned by the
    /// caller); `None` when the system cannot duplicate it (the loop then looks on each wake).
    pub fn wait_handle(&self) -> Option<OwnedHandle> {
        let child = self.child.borrow();
        // SAFETY: the child's process handle is valid while `child` lives; it is borrowed only
        // to duplicate it.
        let borrowed =
            unsafe { std::os::windows::io::BorrowedHandle::borrow_raw(child.as_raw_handle()) };
        borrowed.try_clone_to_owned().ok()
    }

    /// Passes a stop request on to the attempt: INT and BREAK as `CTRL_BREAK_EVENT` to its
    /// process group (an attempt in a group of its own has Ctrl-C disabled), KILL by
    /// terminating its job; no other signal exists there.
    pub fn forward(&self, signal: i32) {
        self.signal_tree(signal);
    }

    /// The process group mode it was started in ([`GroupMode::Own`]).
    pub fn mode(&self) -> GroupMode {
        GroupMode::Own
    }

    /// Sends `signal` to the whole tree: INT and BREAK as `CTRL_BREAK_EVENT` to the attempt's
    /// process group (its descendants stay in it unless they asked for one of their own), KILL
    /// by `TerminateJobObject`, which ends every process in the job whatever its group.
    pub fn signal_tree(&self, signal: i32) {
        if signal == KILL {
            if self.terminated.get().is_none() {
                self.terminated.set(Some(Instant::now()));
            }
            // SAFETY: a job handle this attempt owns.
            unsafe { TerminateJobObject(self.job.as_raw_handle() as HANDLE, TERMINATED) };
        } else if signal == INTERRUPT || signal == BREAK {
            let group = self.child.borrow().id();
            // SAFETY: no memory is passed; a group that has ended makes the call fail.
            unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, group) };
        }
    }

    /// Stops the whole tree with `signal` ([`Attempt::signal_tree`]); 0 sends nothing.
    pub fn stop_tree(&self, signal: i32) {
        if signal != 0 {
            self.signal_tree(signal);
        }
    }

    /// After the attempt's own process ended: sends `signal` to what is left in its job.
    /// Returns what was left.
    pub fn signal_rest(&self, signal: i32) -> super::Left {
        let left = self.left();
        if left.any() {
            self.signal_tree(signal);
        }
        left
    }

    /// After the attempt's own process ended: whether any process of its job is still running
    /// (no longer asked [`TERMINATION_WAIT`] after retry terminated the job).
    pub fn rest_alive(&self) -> bool {
        self.left().any()
    }

    /// How many processes of its job are still running ([`Attempt::rest_alive`]).
    fn left(&self) -> super::Left {
        if self
            .terminated
            .get()
            .is_some_and(|at| at.elapsed() >= TERMINATION_WAIT)
        {
            return super::Left::Nothing;
        }
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION =
            // SAFETY: a plain C struct, all zeroes valid.
            unsafe { std::mem::zeroed() };
        // SAFETY: the job handle is valid and `info` is the size passed.
        let ok = unsafe {
            QueryInformationJobObject(
                self.job.as_raw_handle() as HANDLE,
                JobObjectBasicAccountingInformation,
                (&raw mut info).cast(),
                u32::try_from(size_of_val(&info)).unwrap_or(0),
                std::ptr::null_mut(),
            )
        };
        match info.ActiveProcesses {
            n if ok != 0 && n > 0 => super::Left::Processes(u64::from(n)),
            _ => super::Left::Nothing,
        }
    }

    /// The attempt's status if its process has ended. Never blocks.
    pub fn try_reap(&self) -> Option<Ended> {
        let status = self.child.borrow_mut().try_wait().ok()??;
        // `code` is the whole 32-bit exit code, as an i32.
        let code = status.code().map_or(TERMINATED, |c| c as u32);
        Some(if self.terminated.get().is_some() && code == TERMINATED {
            Ended::Signaled(KILL)
        } else {
            Ended::Exited(code)
        })
    }
}

/// No reaper on Windows: the job holds the tree. Nothing to do.
pub fn become_subreaper() {}

/// Nothing to reap on Windows: a process handle is closed with its [`Attempt`].
pub fn reap_strays() {}

/// Which of retry's outputs is a pipe whose reader is gone: not known before a write fails on
/// Windows (a write then says so): `None`.
pub fn gone_reader() -> Option<crate::held::Stream> {
    None
}

/// Whether retry's stdout and stderr can take bytes now: Windows cannot ask a pipe that
/// without writing to it: `true`.
pub fn outputs_take_bytes() -> bool {
    true
}

/// Starts `argv[0]` (looked up as `cmd.exe` does) with arguments `argv[1..]` and extra
/// environment `env`, less the variables named in `withheld`, suspended, in a process group of
/// its own, then puts it in a new job (killed when retry ends) and lets it run. stdin, stdout
/// and stderr are inherited except those `piped` asks for.
///
/// # Errors
/// [`LaunchError::Command`]: not found, or not a program Windows can run (126);
/// [`LaunchError::Own`]: the job could not be made, or the process not put in it.
pub fn spawn(
    argv: &[OsString],
    env: &[(&str, String)],
    withheld: &[&str],
    _mode: GroupMode,
    piped: Piped,
) -> Result<Spawned, LaunchError> {
    let Some(name) = argv.first() else {
        return Err(LaunchError::Command(io::ErrorKind::NotFound.into()));
    };
    let program = find_program(name).map_err(LaunchError::Command)?;
    if program.is_dir() {
        // Found but no program: 126, as on Unix (Windows itself says "access denied", Wine
        // "invalid handle").
        return Err(LaunchError::Command(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "is a directory",
        )));
    }
    // A lower bound of the command line std builds (each word, a space): one past the limit
    // would be cut or refused by Windows in its own words.
    let line: usize = std::iter::once(program.as_os_str())
        .chain(argv[1..].iter().map(OsString::as_os_str))
        .map(|word| std::os::windows::ffi::OsStrExt::encode_wide(word).count() + 1)
        .sum();
    if line > COMMAND_LINE_MAX {
        return Err(LaunchError::Command(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "its command line is longer than Windows allows ({COMMAND_LINE_MAX} characters)"
            ),
        )));
    }
    let mut command = Command::new(program);
    command.args(&argv[1..]);
    let pipe = |wanted: bool| {
        if wanted {
            Stdio::piped()
        } else {
            Stdio::inherit()
        }
    };
    command
        .stdin(pipe(piped.stdin))
        .stdout(pipe(piped.stdout))
        .stderr(pipe(piped.stderr && !piped.stderr_in_stdout));
    environment(&mut command, env, withheld);
    let mut attempt = start(command)?;
    let child = attempt.child.get_mut();
    Ok(Spawned {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        attempt,
    })
}

/// Starts a hook: `cmd.exe /C script` with extra environment `env` (less `withheld`), as an
/// attempt is (its own group and job), stdin from NUL and stdout onto retry's stderr (a hook
/// must not write into the pipeline's stdout); with `output` (`--chronic`'s capture), its
/// stdout and stderr both go there instead.
///
/// # Errors
/// When `cmd.exe` cannot be started or its job made.
pub fn spawn_hook(
    script: &str,
    env: &[(&str, String)],
    withheld: &[&str],
    output: Option<std::os::windows::io::BorrowedHandle<'_>>,
) -> io::Result<Attempt> {
    let mut command = Command::new(comspec());
    // The script as cmd reads it: with `/S`, cmd drops the outer quotes and keeps the script's
    // own as written; `/D` skips AutoRun commands.
    command.raw_arg(format!("/D /S /C \"{script}\""));
    command.stdin(Stdio::null());
    match output {
        // `--chronic`'s capture: stdout and stderr both into it.
        Some(pipe) => command
            .stdout(Stdio::from(pipe.try_clone_to_owned()?))
            .stderr(Stdio::from(pipe.try_clone_to_owned()?)),
        None => command
            .stdout(Stdio::from(io::stderr()))
            .stderr(Stdio::inherit()),
    };
    environment(&mut command, env, withheld);
    start(command).map_err(|e| match e {
        LaunchError::Command(e) | LaunchError::Own(e) => e,
    })
}

/// `%ComSpec%`, else `cmd.exe` (found on the system's PATH).
fn comspec() -> OsString {
    std::env::var_os("ComSpec").unwrap_or_else(|| OsString::from("cmd.exe"))
}

/// Sets the extra variables and removes the withheld ones.
fn environment(command: &mut Command, env: &[(&str, String)], withheld: &[&str]) {
    for name in withheld {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
}

/// Makes the job, starts `command` suspended in a new process group, puts it in the job and
/// resumes it.
fn start(mut command: Command) -> Result<Attempt, LaunchError> {
    let job = new_job().map_err(LaunchError::Own)?;
    command.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_SUSPENDED);
    let child = command.spawn().map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound
            || e.raw_os_error() == Some(ERROR_BAD_EXE_FORMAT as i32)
            || e.raw_os_error() == Some(ERROR_FILENAME_EXCED_RANGE as i32)
            || e.kind() == io::ErrorKind::PermissionDenied
        {
            LaunchError::Command(e)
        } else {
            LaunchError::Own(e)
        }
    })?;
    let attempt = Attempt {
        child: RefCell::new(child),
        job,
        terminated: Cell::new(None),
    };
    let process = attempt.child.borrow().as_raw_handle() as HANDLE;
    // SAFETY: valid job and process handles.
    if unsafe { AssignProcessToJobObject(attempt.job.as_raw_handle() as HANDLE, process) } == 0 {
        let e = io::Error::last_os_error();
        let _ = attempt.child.borrow_mut().kill();
        let _ = attempt.child.borrow_mut().wait();
        return Err(LaunchError::Own(e));
    }
    if resume(attempt.child.borrow().id()) == 0 {
        // A process left suspended would hang the run until its timeout, if any.
        let e = io::Error::other("its main thread could not be resumed");
        attempt.signal_tree(KILL);
        let _ = attempt.child.borrow_mut().wait();
        return Err(LaunchError::Own(e));
    }
    Ok(attempt)
}

/// A new job whose processes all end when its last handle closes (retry's end).
fn new_job() -> io::Result<OwnedHandle> {
    // SAFETY: no security attributes, no name.
    let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle CreateJobObjectW just returned, owned by nothing else.
    let job = unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) };
    // SAFETY: a plain C struct, all zeroes valid.
    let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: the job handle is valid and `limits` is the size passed.
    let ok = unsafe {
        SetInformationJobObject(
            raw,
            JobObjectExtendedLimitInformation,
            (&raw const limits).cast(),
            u32::try_from(size_of_val(&limits)).unwrap_or(0),
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(job)
}

/// Resumes every thread of process `pid` (started suspended: its main thread), found through
/// a Tool Help snapshot, as std does not hand out the main thread's handle. Returns how many it
/// resumed.
fn resume(pid: u32) -> usize {
    // SAFETY: a snapshot of every thread; the handle is closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot.is_null() || snapshot as isize == -1 {
        return 0;
    }
    let mut resumed = 0;
    // SAFETY: a handle the call above returned, owned by nothing else.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(snapshot as RawHandle) };
    // SAFETY: a plain C struct, all zeroes valid; dwSize set as the API asks.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = u32::try_from(size_of_val(&entry)).unwrap_or(0);
    let raw = snapshot.as_raw_handle() as HANDLE;
    // SAFETY: a valid snapshot and an entry of the size given.
    let mut more = unsafe { Thread32First(raw, &raw mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: OpenThread with a thread id from the snapshot; checked for null.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: a handle OpenThread just returned, owned by nothing else.
                let thread = unsafe { OwnedHandle::from_raw_handle(thread as RawHandle) };
                // SAFETY: a valid thread handle with THREAD_SUSPEND_RESUME.
                if unsafe { ResumeThread(thread.as_raw_handle() as HANDLE) } != u32::MAX {
                    resumed += 1;
                }
            }
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(raw, &raw mut entry) } != 0;
    }
    resumed
}
