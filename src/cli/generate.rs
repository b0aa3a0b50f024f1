//! Generated documentation: the man page and the shell completion scripts, built from the clap
//! definition in [`crate::cli`] by the hidden `retry --generate WHAT`.
//!
//! Copies are committed under `man/` and `completions/` (see [`Target::path`]); the test
//! `tests/cli/generated.rs` regenerates them and fails on any difference. The completion
//! scripts are built in `generate/complete.rs`, with the glue that completes the wrapped
//! command.

use std::io::{self, Write};

use clap::ValueEnum;
use clap_complete::Shell;
use clap_mangen::Man;
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};

use crate::cli;

mod complete;

/// What `--generate` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// The man page, retry(1), in roff.
    Man,
    /// bash completions.
    Bash,
    /// zsh completions.
    Zsh,
    /// fish completions.
    Fish,
    /// elvish completions.
    Elvish,
    /// PowerShell completions.
    Powershell,
}

impl Target {
    /// Where the generated text is committed, relative to the repository root.
    pub fn path(self) -> &'static str {
        match self {
            Target::Man => "man/retry.1",
            Target::Bash => "completions/retry.bash",
            Target::Zsh => "completions/_retry",
            Target::Fish => "completions/retry.fish",
            Target::Elvish => "completions/retry.elv",
            Target::Powershell => "completions/_retry.ps1",
        }
    }
}

/// Writes `target`'s text to `out`. The output depends only on the clap definition, never on
/// the environment (the `RETRY_<FLAG>` variables are named, their values never shown).
///
/// # Errors
/// From writing to `out`; or when clap_complete's script is not as the completion glue
/// expects (a clap_complete that writes it otherwise: the tests say so).
pub fn write(target: Target, out: &mut dyn Write) -> io::Result<()> {
    let shell = match target {
        Target::Man => return man(command(), out),
        Target::Bash => Shell::Bash,
        Target::Zsh => Shell::Zsh,
        Target::Fish => Shell::Fish,
        Target::Elvish => Shell::Elvish,
        Target::Powershell => Shell::PowerShell,
    };
    out.write_all(&complete::script(shell)?)
}

/// The definition as documented: environment values hidden, so that the output is the same
/// whoever runs it.
fn command() -> clap::Command {
    cli::documented().mut_args(|arg| arg.hide_env_values(true))
}

/// The man page: clap_mangen's sections (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, one section per
/// help heading), then EXIT STATUS, ENVIRONMENT, SIGNALS and EXAMPLES, then VERSION.
fn man(command: clap::Command, out: &mut dyn Write) -> io::Result<()> {
    let extra = sections(&command);
    // The title line by hand: clap_mangen drops an empty date instead of quoting it, which
    // shifts the other fields; and a date would make the page differ from day to day.
    let title = format!(
        ".TH RETRY 1 \"\" \"retry {}\" \"User Commands\"\n",
        env!("CARGO_PKG_VERSION")
    );
    let man = Man::new(command);
    let parts = [
        title.into_bytes(),
        rendered(|w| man.render_name_section(w))?,
        rendered(|w| man.render_synopsis_section(w))?,
        rendered(|w| man.render_description_section(w))?,
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

/// The sections clap_mangen cannot derive: EXIT STATUS, ENVIRONMENT, SIGNALS, EXAMPLES.
fn sections(command: &clap::Command) -> Roff {
    let mut r = Roff::new();

    r.control("SH", ["EXIT STATUS"]);
    item(
        &mut r,
        [bold("0")],
        "An attempt succeeded; or --dry-run, --help, --version.",
    );
    item(
        &mut r,
        [italic("status")],
        "The last attempt's exit status, when retry gives up: no retries left, the deadline \
         passed, the status is not retried, or a stop signal arrived while it ran. An attempt \
         that exited 0 but failed through --retry-if-output gives 1.",
    );
    item(
        &mut r,
        [roman("death by signal "), italic("N")],
        "The last attempt died of signal N: retry dies of the same signal (without a core \
         dump), so the caller sees what it would have seen without retry (a shell shows \
         128+N).",
    );
    item(
        &mut r,
        [bold("124"), roman(", "), bold("137")],
        "The last attempt was stopped at its --timeout or at the --deadline: 124 if TERM \
         ended it, 137 if KILL was needed after --kill-after (as timeout(1)).",
    );
    item(
        &mut r,
        [bold("125")],
        "retry's own error: a bad flag or value, a bad RETRY_<FLAG> variable, an unknown \
         preset, a missing COMMAND. One line on stderr, starting \"retry: \", names the flag \
         or variable and the value.",
    );
    item(
        &mut r,
        [bold("126"), roman(", "), bold("127")],
        "COMMAND could not be executed (126) or was not found (127). A failed launch is never \
         retried.",
    );
    r.control("PP", []);
    r.text([roman(
        "The statuses 126, 127 and 141 (death by SIGPIPE: the reader is gone) form the default \
         stop set: they are not retried unless --retry-on names them. --stop-on adds to it.",
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
        let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let value = arg
            .get_value_names()
            .and_then(|v| v.first())
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        r.control("TP", []);
        r.text([bold(env.to_string_lossy())]);
        r.text([roman(format!("As --{long}{value}: {help}."))]);
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
         --max-retries), empty when unlimited.",
    );
    item(
        &mut r,
        [bold("RETRY_RUN_ID")],
        "Set by retry for each attempt and hook: 128 random bits in hex, the same for every \
         attempt of one run, new for every run; also the run_id of every JSON event. Send it \
         as an Idempotency-Key header (IETF draft-ietf-httpapi-idempotency-key-header) so that \
         a server can tell a retried request from a new one.",
    );
    item(
        &mut r,
        [bold("RETRY_TIME_LEFT")],
        "Set by retry for each attempt and hook: the seconds left until --deadline when it \
         starts (three decimals), empty without a deadline.",
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
         wait between attempts: retry ends at once, by that same signal.",
    );
    item(
        &mut r,
        [bold("USR1"), roman(", "), bold("USR2")],
        "Passed on to the running attempt; retrying goes on. Dropped during a wait.",
    );
    item(
        &mut r,
        [bold("TERM"), roman(" then "), bold("KILL")],
        "An attempt is stopped (at --timeout, at --deadline, or when retry gets TERM) by TERM \
         to its whole process tree, then KILL if it is still alive after --kill-after.",
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

    r.control("SH", ["EXAMPLES"]);
    example(
        &mut r,
        "retry -- curl -fsS https://example.com/health",
        "Up to 6 attempts, with random delays between them of at most 1s, 2s, 4s, 8s and 16s \
         (full jitter).",
    );
    example(
        &mut r,
        "retry -n unlimited -d 5m -t 30s -- ./deploy.sh",
        "Keep trying for at most five minutes, each attempt stopped after 30 seconds.",
    );
    example(
        &mut r,
        "retry --preset aws --dry-run",
        "Show the schedule of the AWS SDK standard retry mode without running anything.",
    );
    example(
        &mut r,
        "export RETRY_PRESET=gcp RETRY_MAX_RETRIES=8",
        "In a CI pipeline: set the policy once; every retry in later steps uses it, and a flag \
         on one command line still overrides it.",
    );
    example(
        &mut r,
        "retry --retry-on 75,100-199 --stop-on 2 -- make fetch",
        "Retry only statuses 75 and 100 to 199, never 2.",
    );
    example(
        &mut r,
        "retry --http-hints -- curl -fsS -D - -o out.json https://api.example.com/",
        "Wait at least as long as the server asks (Retry-After, RateLimit, X-RateLimit-Reset, \
         x-amz-retry-after), up to --max-hint.",
    );
    example(
        &mut r,
        "retry --idle-timeout 5m -- ./long-test-suite",
        "Stop and retry an attempt that has printed nothing for five minutes.",
    );
    example(
        &mut r,
        "producer | retry --replay-stdin --stdout-on-success -- upload -",
        "Give every attempt the same stdin, and pass on the stdout of the successful attempt \
         only.",
    );
    r
}

/// A tagged paragraph: `tag` on its own line, `text` indented below it.
fn item(r: &mut Roff, tag: impl Into<Vec<Inline>>, text: &str) {
    r.control("TP", []);
    r.text(tag);
    r.text([roman(text)]);
}

/// An example: the command line in bold, then what it does.
fn example(r: &mut Roff, command: &str, text: &str) {
    item(r, [bold(command)], text);
}
