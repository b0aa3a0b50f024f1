//! Signal names on Windows, which has no signals between processes: the numbers of the
//! Microsoft C runtime's `signal.h` (<https://learn.microsoft.com/en-us/cpp/c-runtime-library/reference/signal>),
//! which retry uses for the console's control events (INT for Ctrl-C, BREAK for Ctrl-Break,
//! HUP for a closed console), for a job's termination (KILL) and in the names of `--retry-on`
//! lists. CHILD, CONTINUE, IO and PIPE do not exist there: numbers no event ever carries.

/// The table: (name, number).
const TABLE: [(&str, i32); 10] = [
    ("SIGHUP", 1),
    ("SIGINT", INTERRUPT),
    ("SIGILL", 4),
    ("SIGFPE", 8),
    ("SIGKILL", KILL),
    ("SIGSEGV", 11),
    ("SIGTERM", TERMINATE),
    ("SIGBREAK", BREAK),
    ("SIGABRT", ABORT),
    ("SIGPIPE", PIPE),
];

/// The number of `name` (`SIGBREAK`).
pub fn number(name: &str) -> Option<i32> {
    TABLE.iter().find(|(n, _)| *n == name).map(|&(_, s)| s)
}

/// The name of `n`.
pub fn name(n: i32) -> Option<&'static str> {
    TABLE.iter().find(|(_, s)| *s == n).map(|&(name, _)| name)
}

/// SIGABRT (22 in the C runtime).
pub const ABORT: i32 = 22;
/// Ctrl-Break: SIGBREAK (21 in the C runtime).
pub const BREAK: i32 = 21;
/// No such signal on Windows (a child's end is its process handle).
pub const CHILD: i32 = -17;
/// No such signal on Windows.
pub const CONTINUE: i32 = -18;
/// Ctrl-C: SIGINT.
pub const INTERRUPT: i32 = 2;
/// No such signal on Windows.
pub const IO: i32 = -29;
/// A job terminated (`TerminateJobObject`): named KILL as on Unix, whose status (137) it has.
pub const KILL: i32 = 9;
/// A pipe whose reader is gone: 13, as on Unix, for `--retry-on SIGPIPE` (141); Windows
/// reports it as an error of the write instead.
pub const PIPE: i32 = 13;
/// SIGTERM (15): accepted in lists, never delivered between processes on Windows.
pub const TERMINATE: i32 = 15;
