//! `probe.exe`: the small Windows program the Windows suite (`tests/wine.rs`) runs under
//! `retry.exe` under Wine. One subcommand per behaviour a test needs: an exit code, a sleep,
//! output, a variable, a failure that stops after N runs, a grandchild or a detached child
//! with its pid recorded, a process that ignores Ctrl-Break, whether a pid is alive, and a
//! Windows-side parent that reports a child's full 32-bit exit code (wine64's own Unix status
//! keeps only the low 8 bits).
//!
//! ```text
//! probe exit N                 exits with N (any u32: 3221225477 is STATUS_ACCESS_VIOLATION)
//! probe sleep SECS             sleeps SECS seconds (a decimal), then exits 0
//! probe print TEXT...          prints TEXT (the words joined by spaces) and a newline to stdout
//! probe eprint TEXT...         the same to stderr
//! probe env NAME               prints the variable NAME; exits 1 when it is unset
//! probe fail-until N FILE      adds a line to FILE, prints `run K` (K: its lines now) to
//!                              stdout; exits 1 while K < N, then 0
//! probe grandchild PIDFILE SECS
//!                              starts `probe sleep SECS`, writes its pid to PIDFILE, sleeps SECS
//! probe detach PIDFILE [SECS]  starts `probe sleep SECS` (default 60) as a detached process,
//!                              out of the job when the job allows it, writes its pid to
//!                              PIDFILE and exits 0; stderr says `breakaway` or `in job`
//! probe ignore-break SECS      returns TRUE for every console control event, sleeps SECS
//! probe alive PID              exits 0 if PID is a running process, 1 otherwise
//! probe run EXE ARGS...        runs EXE with the standard handles inherited and waits; then
//!                              prints `exit=N` (its full 32-bit exit code) as the last line
//!                              of stderr and exits 0 (2 when EXE cannot be started)
//! probe break-after MS EXE ARGS...
//!                              runs EXE in a new process group, sends that group
//!                              Ctrl-Break after MS milliseconds, waits, and prints `exit=N`
//!                              as `run` does (Windows only: Wine delivers no Ctrl-Break)
//! probe stdin-copy             copies stdin to stdout
//! probe storm DIR MAX          records itself in DIR (a file named by its pid holding its
//!                              creation time), then forever: while DIR holds fewer than MAX
//!                              records, starts another `probe storm DIR MAX` without waiting;
//!                              after that, starts and waits for `probe exit 0` in a loop (so
//!                              the tree keeps starting processes while it is being ended, yet
//!                              never holds more than about 2 * MAX)
//! probe alive-in DIR           prints the pid of every process recorded in DIR (by `storm` or
//!                              `pid-sleep`) that is still running, the same process (its
//!                              creation time checked, so a reused pid does not count); exits 0
//! probe kill-in DIR            terminates every process recorded in DIR still running (a test's
//!                              cleanup after a failure); exits 0
//! probe pid-sleep FILE SECS    records itself in FILE as `storm` does, then sleeps SECS
//! probe detach-keep PIDFILE SECS
//!                              as `detach`, but the sleeper keeps this process's standard
//!                              handles (it holds the caller's pipes open)
//! probe spew BYTES [LAST]      writes BYTES bytes of 100-byte lines (99 `x` and `\n`; the last
//!                              line shorter) to stdout, then LAST and `\n` when given
//! probe wait-file FILE SECS    waits until FILE exists (up to SECS): exits 0, or 1 if it does not
//! probe run-io STDIN STDOUT EXE ARGS...
//!                              as `run`, with EXE's stdin `inherit`, `nul` or `closed` (no
//!                              handle at all) and its stdout `inherit` or `nul`
//! ```
//!
//! A pid file is written whole under another name and renamed, so that a test polling for it
//! never reads half of it. Bad usage exits 64 with one line.

#[cfg(not(windows))]
compile_error!(
    "probe.exe is a Windows program: build it for x86_64-pc-windows-gnu (.ci/windows build)"
);

mod records;

use std::io::Write;
use std::os::windows::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use windows_sys::Win32::Foundation::{CloseHandle, FALSE, STILL_ACTIVE, TRUE};
use windows_sys::Win32::System::Console::{STD_INPUT_HANDLE, SetConsoleCtrlHandler, SetStdHandle};
use windows_sys::Win32::System::Threading::{
    CREATE_BREAKAWAY_FROM_JOB, DETACHED_PROCESS, GetExitCodeProcess, OpenProcess,
    PROCESS_QUERY_LIMITED_INFORMATION,
};

use records::{kill_same, record_self, recorded, same_alive};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let code = match words.as_slice() {
        ["exit", n] => number::<u32>(n),
        ["sleep", secs] => {
            sleep(secs);
            0
        }
        ["print", text @ ..] => {
            println!("{}", text.join(" "));
            0
        }
        ["eprint", text @ ..] => {
            eprintln!("{}", text.join(" "));
            0
        }
        ["env", name] => match std::env::var_os(name) {
            Some(value) => {
                println!("{}", value.to_string_lossy());
                0
            }
            None => 1,
        },
        ["fail-until", n, file] => fail_until(number::<usize>(n), Path::new(file)),
        ["grandchild", pidfile, secs] => {
            let mut child = spawn_sleeper(secs, 0);
            write_pid(pidfile, child.id());
            sleep(secs);
            // Its sleep ends about when this one does (unless something stopped the tree).
            let _ = child.wait();
            0
        }
        ["detach", pidfile] => detach(pidfile, "60"),
        ["detach", pidfile, secs] => detach(pidfile, secs),
        ["ignore-break", secs] => {
            // SAFETY: registers a handler that only returns TRUE, which is sound on any thread.
            if unsafe { SetConsoleCtrlHandler(Some(ignore), TRUE) } == FALSE {
                fail("SetConsoleCtrlHandler failed");
            }
            sleep(secs);
            0
        }
        ["alive", pid] => {
            if alive(number::<u32>(pid)) {
                0
            } else {
                1
            }
        }
        ["run", exe, rest @ ..] => run(exe, rest),
        ["break-after", ms, exe, rest @ ..] => break_after(number(ms), exe, rest),
        ["stdin-copy"] => {
            let copied = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::stdout().lock());
            if let Err(e) = copied {
                fail(&format!("stdin-copy: {e}"));
            }
            0
        }
        ["storm", dir, max] => storm(Path::new(dir), number::<usize>(max)),
        ["alive-in", dir] => {
            for (pid, _) in recorded(Path::new(dir)).filter(|&(pid, made)| same_alive(pid, made)) {
                println!("{pid}");
            }
            0
        }
        ["kill-in", dir] => {
            for (pid, made) in recorded(Path::new(dir)) {
                kill_same(pid, made);
            }
            0
        }
        ["pid-sleep", file, secs] => {
            record_self(Path::new(file));
            sleep(secs);
            0
        }
        ["detach-keep", pidfile, secs] => {
            let flags = DETACHED_PROCESS | CREATE_BREAKAWAY_FROM_JOB;
            let (child, how) = match try_spawn_keeping(secs, flags) {
                Ok(child) => (child, "breakaway"),
                Err(_) => match try_spawn_keeping(secs, DETACHED_PROCESS) {
                    Ok(child) => (child, "in job"),
                    Err(e) => fail(&format!("cannot start a sleeper: {e}")),
                },
            };
            write_pid(pidfile, child.id());
            eprintln!("detach-keep: {how}");
            0
        }
        ["spew", bytes] => spew(number::<u64>(bytes), None),
        ["spew", bytes, last] => spew(number::<u64>(bytes), Some(last)),
        ["wait-file", file, secs] => {
            let end = std::time::Instant::now() + Duration::from_secs_f64(number(secs));
            loop {
                if Path::new(file).exists() {
                    break 0;
                }
                if std::time::Instant::now() > end {
                    break 1;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        ["run-io", stdin, stdout, exe, rest @ ..] => run_io(stdin, stdout, exe, rest),
        _ => usage(),
    };
    let _ = std::io::stdout().flush();
    // ExitProcess takes the u32 as it is: a code of 2^31 or more arrives whole.
    std::process::exit(code as i32);
}

/// The console control handler of `ignore-break`: every event (Ctrl-C, Ctrl-Break, close)
/// handled, so that the process goes on.
unsafe extern "system" fn ignore(_event: u32) -> windows_sys::core::BOOL {
    TRUE
}

/// `fail-until N FILE`: one more line in FILE, `run K` on stdout (K lines now); 1 while
/// K < N, then 0.
fn fail_until(n: usize, file: &Path) -> u32 {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .unwrap_or_else(|e| fail(&format!("fail-until: {}: {e}", file.display())));
    if let Err(e) = writeln!(f, "run") {
        fail(&format!("fail-until: {}: {e}", file.display()));
    }
    drop(f);
    let runs = std::fs::read_to_string(file).map_or(0, |text| text.lines().count());
    println!("run {runs}");
    if runs < n { 1 } else { 0 }
}

/// `detach PIDFILE SECS`: a sleeper detached from the console, out of the job if the job
/// allows a breakaway (CreateProcess refuses CREATE_BREAKAWAY_FROM_JOB with access denied when
/// it does not), else in it.
fn detach(pidfile: &str, secs: &str) -> u32 {
    let (child, how) = match try_spawn_sleeper(secs, DETACHED_PROCESS | CREATE_BREAKAWAY_FROM_JOB) {
        Ok(child) => (child, "breakaway"),
        Err(_) => (spawn_sleeper(secs, DETACHED_PROCESS), "in job"),
    };
    write_pid(pidfile, child.id());
    eprintln!("detach: {how}");
    0
}

/// `probe sleep SECS` started with the creation flags `flags`, its standard handles the null
/// device (it holds none of the caller's pipes).
fn try_spawn_sleeper(secs: &str, flags: u32) -> std::io::Result<std::process::Child> {
    let me = std::env::current_exe()?;
    Command::new(me)
        .args(["sleep", secs])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .creation_flags(flags)
        .spawn()
}

/// [`try_spawn_sleeper`], or the end of this process with the reason.
fn spawn_sleeper(secs: &str, flags: u32) -> std::process::Child {
    try_spawn_sleeper(secs, flags).unwrap_or_else(|e| fail(&format!("cannot start a sleeper: {e}")))
}

/// Writes `pid` to `pidfile` through a file beside it, renamed when whole.
fn write_pid(pidfile: &str, pid: u32) {
    let partial = format!("{pidfile}.partial");
    let written =
        std::fs::write(&partial, pid.to_string()).and_then(|()| std::fs::rename(&partial, pidfile));
    if let Err(e) = written {
        fail(&format!("{pidfile}: {e}"));
    }
}

/// Whether `pid` names a process that has not ended: OpenProcess, then GetExitCodeProcess
/// says STILL_ACTIVE (a process that ended with code 259 would count as running: none here
/// does).
fn alive(pid: u32) -> bool {
    // SAFETY: OpenProcess takes plain values; the handle it returns is checked, then closed.
    unsafe {
        let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
        if handle.is_null() {
            return false;
        }
        let mut code = 0u32;
        let queried = GetExitCodeProcess(handle, &mut code);
        CloseHandle(handle);
        queried != FALSE && code == STILL_ACTIVE as u32
    }
}

/// `run EXE ARGS...`: EXE with inherited handles, waited for; `exit=N` on stderr, then 0.
fn run(exe: &str, args: &[&str]) -> u32 {
    match Command::new(exe).args(args).status() {
        Ok(status) => {
            // On Windows `code()` is always some: the process's exit code, all 32 bits.
            let code = status.code().unwrap_or(-1) as u32;
            eprintln!("exit={code}");
            0
        }
        Err(e) => {
            eprintln!("run: cannot start {exe}: {e}");
            2
        }
    }
}

/// `storm DIR MAX`: see the usage at the top.
fn storm(dir: &Path, max: usize) -> u32 {
    record_self(&dir.join(std::process::id().to_string()));
    let me = std::env::current_exe().unwrap_or_else(|e| fail(&format!("current_exe: {e}")));
    let dir_text = dir.to_string_lossy().into_owned();
    let max_text = max.to_string();
    loop {
        let count = std::fs::read_dir(dir).map_or(max, |entries| entries.count());
        let mut command = Command::new(&me);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if count < max {
            command.args(["storm", &dir_text, &max_text]);
            // Not waited for: its handle is dropped, it runs on.
            let _ = command.spawn();
        } else {
            command.args(["exit", "0"]);
            if let Ok(mut child) = command.spawn() {
                let _ = child.wait();
            } else {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// `probe sleep SECS` started with the creation flags `flags`, keeping this process's
/// standard handles.
fn try_spawn_keeping(secs: &str, flags: u32) -> std::io::Result<std::process::Child> {
    let me = std::env::current_exe()?;
    Command::new(me)
        .args(["sleep", secs])
        .creation_flags(flags)
        .spawn()
}

/// `spew BYTES [LAST]`: see the usage at the top.
fn spew(bytes: u64, last: Option<&str>) -> u32 {
    let mut line = [b'x'; 100];
    line[99] = b'\n';
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut left = bytes;
    while left > 0 {
        let take = left.min(100) as usize;
        // A shorter last line is the end of a whole one: `x`s, then the newline.
        let chunk = &line[100 - take..];
        if let Err(e) = out.write_all(chunk) {
            fail(&format!("spew: {e}"));
        }
        left -= take as u64;
    }
    if let Some(last) = last
        && let Err(e) = writeln!(out, "{last}")
    {
        fail(&format!("spew: {e}"));
    }
    if let Err(e) = out.flush() {
        fail(&format!("spew: {e}"));
    }
    0
}

/// `run-io STDIN STDOUT EXE ARGS...`: `run` with EXE's stdin and stdout as asked.
fn run_io(stdin: &str, stdout: &str, exe: &str, args: &[&str]) -> u32 {
    let mut command = Command::new(exe);
    command.args(args);
    match stdin {
        "inherit" => {}
        "nul" => {
            command.stdin(Stdio::null());
        }
        "closed" => {
            // std passes a null standard handle on as null: EXE starts with no stdin at all.
            // SAFETY: sets this process's standard input handle to null; nothing here reads it.
            if unsafe { SetStdHandle(STD_INPUT_HANDLE, std::ptr::null_mut()) } == FALSE {
                fail("SetStdHandle failed");
            }
        }
        _ => return usage(),
    }
    match stdout {
        "inherit" => {}
        "nul" => {
            command.stdout(Stdio::null());
        }
        _ => return usage(),
    }
    match command.status() {
        Ok(status) => {
            eprintln!("exit={}", status.code().unwrap_or(-1) as u32);
            0
        }
        Err(e) => {
            eprintln!("run-io: cannot start {exe}: {e}");
            2
        }
    }
}

/// `break-after MS EXE ARGS...`: EXE in a new process group, Ctrl-Break to that group after
/// MS milliseconds; `exit=N` on stderr, then 0.
fn break_after(ms: u64, exe: &str, args: &[&str]) -> u32 {
    use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent};
    use windows_sys::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP;
    let mut child = match Command::new(exe)
        .args(args)
        .creation_flags(CREATE_NEW_PROCESS_GROUP)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("break-after: cannot start {exe}: {e}");
            return 2;
        }
    };
    std::thread::sleep(Duration::from_millis(ms));
    // SAFETY: plain values; the group is the child's, whose id is its pid.
    if unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, child.id()) } == FALSE {
        eprintln!("break-after: GenerateConsoleCtrlEvent failed");
    }
    match child.wait() {
        Ok(status) => {
            eprintln!("exit={}", status.code().unwrap_or(-1) as u32);
            0
        }
        Err(e) => fail(&format!("break-after: {e}")),
    }
}

/// Sleeps `secs` seconds (a decimal number).
fn sleep(secs: &str) {
    let secs: f64 = number(secs);
    std::thread::sleep(Duration::from_secs_f64(secs));
}

/// `text` parsed as a `T`, or the end of this process with the usage line.
fn number<T: std::str::FromStr>(text: &str) -> T {
    text.parse()
        .unwrap_or_else(|_| fail(&format!("not a number: {text}")))
}

/// One line to stderr and exit 64 (bad usage, or what a test needed could not be done).
fn fail(line: &str) -> ! {
    eprintln!("probe: {line}");
    std::process::exit(64);
}

/// The usage line and exit 64.
fn usage() -> u32 {
    fail(
        "usage: probe exit N | sleep SECS | print TEXT | eprint TEXT | env NAME | \
         fail-until N FILE | grandchild PIDFILE SECS | detach PIDFILE [SECS] | \
         ignore-break SECS | alive PID | run EXE ARGS... | break-after MS EXE ARGS... | stdin-copy | storm DIR MAX | \
         alive-in DIR | kill-in DIR | pid-sleep FILE SECS | detach-keep PIDFILE SECS | \
         spew BYTES [LAST] | wait-file FILE SECS | run-io STDIN STDOUT EXE ARGS...",
    )
}
