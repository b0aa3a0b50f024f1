//! The man page, retry(1): clap_mangen's sections from the clap definition (NAME, SYNOPSIS,
//! DESCRIPTION, OPTIONS and one section per help heading), then what it cannot derive: EXIT
//! STATUS and EXAMPLES (the same text as `--help`, from [`super::help`]), ENVIRONMENT (each
//! variable with its value's real name), SIGNALS, WINDOWS, COMING FROM TIMEOUT (coreutils
//! `timeout`'s options and their equivalents) and SEE ALSO.

use std::io::{self, Write};

use clap_mangen::Man;
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};

use super::flags::Flag;
use super::help::{EXAMPLES, EXIT_STATUSES};

/// Writes the man page for `command` (the documented definition) to `out`.
///
/// # Errors
/// Only from writing to `out`.
pub fn write(command: clap::Command, out: &mut dyn Write) -> io::Result<()> {
    let extra = sections(&command);
    // The title line by hand: clap_mangen drops an empty date instead of quoting it, which
    // shifts the other fields; and a date would make the page differ from day to day.
    let title = format!(
        ".TH RETRY 1 \"\" \"retry {}\" \"User Commands\"\n",
        env!("CARGO_PKG_VERSION")
    );
    let command_help = command
        .get_arguments()
        .find(|a| a.get_id() == "command")
        .and_then(|a| a.get_long_help().or(a.get_help()))
        .map(|h| h.to_string())
        .unwrap_or_default();
    // COMMAND is no option: it is described under DESCRIPTION, not listed under OPTIONS.
    let man = Man::new(command.mut_arg("command", |a| a.hide(true)));
    let mut operand = Roff::new();
    operand.control("TP", []);
    operand.text([
        italic("COMMAND"),
        roman(" ["),
        italic("ARGS"),
        roman("]..."),
    ]);
    // The short help is a line without a full stop; the long help follows it.
    operand.text([roman(
        command_help.replacen("\n\n", ". ", 1).replace("\n\n", " "),
    )]);
    let parts = [
        title.into_bytes(),
        rendered(|w| man.render_name_section(w))?,
        rendered(|w| man.render_synopsis_section(w))?,
        rendered(|w| man.render_description_section(w))?,
        rendered(|w| operand.to_writer(w))?,
        rendered(|w| man.render_options_section(w))?,
        rendered(|w| extra.to_writer(w))?,
        rendered(|w| man.render_version_section(w))?,
    ];
    // Each part starts with roff's preamble (how to print apostrophes): write it once.
    let preamble = Roff::new().render();
    out.write_all(preamble.as_bytes())?;
    for part in &parts {
        out.write_all(part.strip_prefix(preamble.as_bytes()).unwrap_or(part))?;
    }
    Ok(())
}

/// What `render` writes, as bytes.
fn rendered(render: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<Vec<u8>> {
    let mut text = Vec::new();
    render(&mut text)?;
    Ok(text)
}

/// The value a variable takes, as its flag names it: `DURATION`, `N|unlimited`; `true|false`
/// for a switch.
fn value_name(arg: &clap::Arg) -> String {
    if !arg.get_action().takes_values() {
        return "true|false".to_string();
    }
    arg.get_value_names()
        .and_then(|v| v.first())
        .map_or_else(|| "VALUE".to_string(), |v| v.to_string())
}

/// The sections clap_mangen cannot derive: EXIT STATUS, ENVIRONMENT, SIGNALS, WINDOWS,
/// EXAMPLES and SEE ALSO.
fn sections(command: &clap::Command) -> Roff {
    let mut r = Roff::new();

    r.control("SH", ["EXIT STATUS"]);
    for s in EXIT_STATUSES {
        let tag = match s.status {
            "status" => vec![italic("status")],
            "signal N" => vec![roman("death by signal "), italic("N")],
            numbers => numbers
                .split(", ")
                .enumerate()
                .flat_map(|(i, n)| {
                    let sep = (i > 0).then(|| roman(", "));
                    sep.into_iter().chain([bold(n)])
                })
                .collect(),
        };
        item(&mut r, tag, s.long);
    }
    r.control("PP", []);
    r.text([roman(
        "The statuses 126 and 127 form the default stop set: they are not retried unless \
         --retry-on names them. --stop-on adds to it. A death by SIGPIPE (141) is retried (an \
         attempt's own connection may have closed); when the reader of retry's own stdout or \
         stderr is gone, retry gives up instead.",
    )]);

    r.control("SH", ["ENVIRONMENT"]);
    r.text([roman(
        "Every backoff and stopping flag may be set from the environment, so that a CI pipeline \
         sets its policy once. Precedence, highest first: a flag on the command line, --preset \
         on the command line, a RETRY_<FLAG> variable, RETRY_PRESET, the built-in default. An \
         empty variable counts as unset. A variable is not read when its flag is given; \
         otherwise a bad value is an error (status 125) naming the variable. The variables \
         pass on to COMMAND with the rest of the environment, so a retry inside it sees them \
         too.",
    )]);
    for arg in command.get_arguments() {
        let Some(flag) = Flag::from_id(arg.get_id().as_str()) else {
            continue;
        };
        let Some(env) = flag.env() else {
            continue;
        };
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        r.control("TP", []);
        r.text([bold(env), roman("="), italic(value_name(arg))]);
        r.text([roman(format!("As {flag}: {help}."))]);
    }
    item(
        &mut r,
        [bold("RETRY_ATTEMPT")],
        "Set by retry in each attempt's environment: the attempt's number, from 1.",
    );
    item(
        &mut r,
        [bold("RETRY_MAX_ATTEMPTS")],
        "Set by retry in each attempt's environment: the number of attempts in all \
         (--max-retries plus one; after a --reset-after reset at attempt K, K plus \
         --max-retries; with --successes N, N times as many), empty when unlimited.",
    );
    item(
        &mut r,
        [bold("RETRY_RUN_ID")],
        "Set by retry for each attempt and hook: a random UUID (version 4, RFC 9562) in its \
         canonical form, the same for every attempt of one run, new for every run; also the \
         run_id of every JSON event and the retry.run_id of the trace. Send it as an \
         Idempotency-Key header (IETF draft-ietf-httpapi-idempotency-key-header) so that a \
         server can tell a retried request from a new one, or as a healthchecks.io rid.",
    );
    item(
        &mut r,
        [bold("RETRY_TIME_LEFT")],
        "Set by retry for each attempt and hook: the seconds left until --deadline when it \
         starts (three decimals), empty without a deadline.",
    );
    item(
        &mut r,
        [bold("RETRY_ENV_FILE")],
        "Set by retry for each attempt and hook: a file private to the run (0600, removed when \
         it ends). NAME=VALUE lines, and NAME<<DELIMITER values of several lines, appended to \
         it are set in the environment of every later attempt and hook, as GitHub Actions' \
         GITHUB_ENV; names starting with RETRY_ are refused with a warning, a malformed line \
         is reported with its number and skipped.",
    );
    item(
        &mut r,
        [
            bold("OTEL_EXPORTER_OTLP_ENDPOINT"),
            roman(", "),
            bold("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
        ],
        "When one is set (an http:// URL; the first gets /v1/traces appended), retry sends a \
         trace of the run over OTLP/HTTP at its end: a span for the run, a child span per \
         attempt. OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default, or http/json), \
         OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT (milliseconds, 10000 by \
         default: the longest the export may take), OTEL_SERVICE_NAME and \
         OTEL_RESOURCE_ATTRIBUTES are honoured, the TRACES_ forms first; OTEL_SDK_DISABLED=true \
         or OTEL_TRACES_EXPORTER=none turn it off. A failed export is one warning and never \
         changes the exit status; a stop signal ends it at once.",
    );
    item(
        &mut r,
        [bold("TRACEPARENT"), roman(", "), bold("TRACESTATE")],
        "Read by retry as the run span's parent (W3C Trace Context); set by retry, when it \
         sends a trace, for each attempt and hook, naming the attempt's span.",
    );
    item(
        &mut r,
        [bold("GITHUB_ACTIONS"), roman(", "), bold("GITHUB_OUTPUT")],
        "When GITHUB_ACTIONS is true (and --no-github is not given), retry writes a ::warning \
         workflow command after a success that needed retries and an ::error when it gives up, \
         on stderr, and appends attempts=N and status=S to the file GITHUB_OUTPUT names.",
    );
    item(
        &mut r,
        [bold("NO_COLOR")],
        "retry's own lines are never coloured. The help is styled (bold, underline) only on a \
         terminal, and not at all when NO_COLOR is set to a non-empty value.",
    );

    r.control("SH", ["SIGNALS"]);
    item(
        &mut r,
        [
            bold("INT"),
            roman(", "),
            bold("TERM"),
            roman(", "),
            bold("HUP"),
            roman(", "),
            bold("QUIT"),
        ],
        "While an attempt runs: passed on to it, once, and retrying stops; retry then exits \
         with that attempt's status (dying of the same signal if the attempt did). During a \
         wait between attempts, or while retry waits on a reader that does not read or on a \
         budget store: retry ends at once, by that same signal.",
    );
    item(
        &mut r,
        [bold("ALRM")],
        "retry's timer, as timeout(1)'s: the running attempt is stopped as at its --timeout \
         (TERM or --signal to its whole tree, KILL after --kill-after), is not retried, and \
         retry exits 124 (137). During a wait: retry ends at once, by ALRM.",
    );
    item(
        &mut r,
        [
            bold("USR1"),
            roman(", "),
            bold("USR2"),
            roman(", "),
            bold("RTMIN"),
            roman(".."),
            bold("RTMAX"),
        ],
        "Passed on to the running attempt; retrying goes on. Dropped during a wait.",
    );
    item(
        &mut r,
        [roman("any other")],
        "Every other signal whose default action ends a process (VTALRM, PROF, XCPU, XFSZ, \
         ABRT, SYS, TRAP, and BUS, SEGV, ILL, FPE sent by kill; STKFLT, PWR, IO on Linux; EMT \
         on macOS and FreeBSD) is a stop, as INT, TERM, HUP and QUIT. PIPE is ignored. Only \
         KILL ends retry while an attempt runs on, and its process gets KILL too where the \
         system allows (Linux, FreeBSD).",
    );
    item(
        &mut r,
        [bold("TERM"), roman(" then "), bold("KILL")],
        "An attempt is stopped (at --timeout, at --deadline, or when retry gets TERM) by TERM \
         (or --signal) to its whole process tree, then KILL if it is still alive after \
         --kill-after.",
    );
    item(
        &mut r,
        [roman("terminal")],
        "In the foreground of a terminal, each attempt stays in retry's process group: it can \
         read the terminal, Ctrl-Z and fg work, and a typed Ctrl-C or a hangup reaches it \
         directly, exactly once (retry does not pass it on a second time). Otherwise each \
         attempt leads a process group of its own, and signals go to that group. Signals \
         ignored when retry starts (INT and QUIT in a background job) stay ignored.",
    );

    windows(&mut r);
    coming_from_timeout(&mut r);

    r.control("SH", ["EXAMPLES"]);
    for e in EXAMPLES {
        item(&mut r, [bold(e.command)], e.what);
    }

    r.control("SH", ["SEE ALSO"]);
    r.text([
        bold("timeout"),
        roman("(1), "),
        bold("flock"),
        roman("(1), "),
        bold("curl"),
        roman("(1), "),
        bold("sysexits.h"),
        roman("(3head)"),
    ]);
    r
}

/// The WINDOWS section: what differs there (docs/platforms.md has the whole of it).
fn windows(r: &mut Roff) {
    r.control("SH", ["WINDOWS"]);
    r.text([roman(
        "retry.exe takes the same flags and variables and exits with the same statuses. Each \
         attempt runs in a Job Object of its own and a new process group; the program is found \
         as cmd.exe finds it (PATH, PATHEXT: a .cmd or .bat file runs through cmd.exe); hooks \
         run through cmd.exe /C.",
    )]);
    item(
        r,
        [roman("exit status")],
        "An attempt's exit code passes through with all its 32 bits (3221225477 for an access \
         violation); in --retry-on and --stop-on lists a code above 255 counts as 255.",
    );
    item(
        r,
        [
            bold("Ctrl-C"),
            roman(", "),
            bold("Ctrl-Break"),
            roman(", a closed console"),
        ],
        "Stops, as INT, BREAK and HUP: no new attempt; a running one gets Ctrl-Break, then \
         its job is terminated after --kill-after, and retry exits with its status; during a \
         wait retry ends at once with 3221225786 (STATUS_CONTROL_C_EXIT).",
    );
    item(
        r,
        [bold("--signal")],
        "INT or BREAK (the default): a timeout sends Ctrl-Break to the attempt's process \
         group (124), then terminates its job after --kill-after (137). Other names are \
         refused.",
    );
    item(
        r,
        [roman("not on Windows")],
        "RETRY_ENV_FILE. What an attempt leaves running ends with its job, and what it \
         writes after the attempt ended is not passed on.",
    );
}

/// The COMING FROM TIMEOUT section: each coreutils `timeout` option and its equivalent.
fn coming_from_timeout(r: &mut Roff) {
    r.control("SH", ["COMING FROM TIMEOUT"]);
    r.text([roman(
        "retry -n 0 runs COMMAND once, as timeout(1) does, with the same exit statuses (124, \
         125, 126, 127, 137) and the same care for signals. Without -n 0 a timed-out attempt is \
         retried like any failure. Each option of timeout, and what it is here:",
    )]);
    for (timeout, here) in TIMEOUT_EQUIVALENTS {
        item(r, [bold(*timeout)], here);
    }
}

/// coreutils `timeout`'s options and forms, and retry's equivalents.
const TIMEOUT_EQUIVALENTS: &[(&str, &str)] = &[
    (
        "timeout DURATION COMMAND",
        "retry -n 0 -t DURATION -- COMMAND.",
    ),
    (
        "-k, --kill-after=DURATION",
        "-k, --kill-after DURATION. retry sends KILL 10s after the signal unless told \
         otherwise; timeout never does without -k: give -k 0 for that.",
    ),
    (
        "-s, --signal=SIGNAL",
        "-s, --signal SIGNAL: the same names and numbers; 0 sends nothing, so only the KILL of \
         --kill-after stops the attempt. A signal sent to retry itself is passed on as itself.",
    ),
    (
        "--preserve-status",
        "--preserve-status. retry dies of the attempt's signal where timeout exits with 128+N: \
         a shell's $? is the same.",
    ),
    (
        "--foreground",
        "Decided for each attempt: in its terminal's foreground, the attempt stays in retry's \
         process group; a timeout still reaches its children, found under /proc.",
    ),
    (
        "-v, --verbose",
        "-v: retry says what it will send at the start, and how each attempt ended.",
    ),
    (
        "DURATION",
        "The same forms (1.5, 2.34e+5d, .5s, inf), and also 250ms, 1m30s, 2h 37min; not \
         hexadecimal. A value too large for the clock is inf, no limit; a positive value below \
         1ns is 1ns. inf is no limit for --timeout, --deadline, --idle-timeout, --reset-after, \
         --max-hint and --budget-refill, never KILL for --kill-after, no cap for --cap; it is \
         refused for --base, --splay and --breaker-cooldown.",
    ),
    (
        "ignored signals",
        "A signal ignored when retry starts stays ignored in every attempt and hook, SIGPIPE \
         and SIGCHLD included (retry changes both for itself).",
    ),
];

/// A tagged paragraph: `tag` on its own line, `text` indented below it.
fn item(r: &mut Roff, tag: impl Into<Vec<Inline>>, text: &str) {
    r.control("TP", []);
    r.text(tag);
    r.text([roman(text)]);
}
