//! The run's events carry everything its text lines say: the supervisor speaks only in events,
//! and the reporter words them, so a run's JSON events (`--log-format json`, which every
//! observer could hear as the reporter does) hold every fact of its text lines. Each scenario
//! runs twice, the same seed, text then JSON, both `--verbose`; every line retry says in text
//! is matched, in order, to the first JSON event by which the events since the line before the
//! previous one hold each of its numbers (attempts, statuses, counts, tokens, seeds; durations and times
//! are written apart in each form, and left out): a line may say what two events say (an
//! attempt's end and the wait after it).

use regex::Regex;
use serde_json::Value;

use crate::helpers::retry;

/// retry's lines on stderr for `args` in `format` (the command's own output is `x`, left out),
/// run in a directory of its own: `{dir}` in an argument is that directory, and `$TMPDIR`.
fn said(format: &str, args: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let args = args.iter().map(|a| a.replace("{dir}", path));
    let out = retry()
        .env("TMPDIR", dir.path())
        .args(["--log-format", format, "-v", "--seed", "7"])
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(out.stderr)
        .unwrap()
        .lines()
        .filter(|l| *l != "x")
        .map(|l| l.replace(path, "{dir}"))
        .collect()
}

/// The numbers a text line names (`8.1` whole), but those of a duration (`3ms`, `1m 4s`,
/// `0.5s`) or a time (`2026-01-01T00:00:00Z`).
fn line_numbers(line: &str) -> Vec<String> {
    let times = Regex::new(r"\d{4}-\d\d-\d\dT[\d:.]+Z|\d+(\.\d+)?(us|ms|s|m|h|d)\b").unwrap();
    let rest = times.replace_all(line, " ");
    Regex::new(r"\d+(\.\d+)?")
        .unwrap()
        .find_iter(&rest)
        .map(|m| m.as_str().to_string())
        .collect()
}

/// The numbers a JSON event holds, in any field but `elapsed` and `run_id`: a number as the
/// text shows it (to three decimals at most), and the digits in a string.
fn event_numbers(event: &Value) -> Vec<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Number(n) if n.is_f64() => {
                let text = format!("{:.3}", n.as_f64().unwrap());
                let text = text.trim_end_matches('0').trim_end_matches('.');
                out.push(text.to_string());
            }
            Value::Number(n) => out.push(n.to_string()),
            Value::String(s) => {
                let digits = Regex::new(r"\d+(\.\d+)?").unwrap();
                out.extend(digits.find_iter(s).map(|m| m.as_str().to_string()));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(fields) => fields
                .iter()
                .filter(|(k, _)| *k != "elapsed" && *k != "run_id")
                .for_each(|(_, v)| walk(v, out)),
            Value::Null | Value::Bool(_) => {}
        }
    }
    let mut out = Vec::new();
    walk(event, &mut out);
    out
}

/// Runs `args` in both forms and checks that each text line's numbers are in the JSON event it
/// is matched to, in order; returns how many lines there were.
fn carries(args: &[&str]) -> usize {
    let text = said("text", args);
    let json: Vec<Value> = said("json", args)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    // The events of a line start where the line before the previous one was matched: a line
    // may say what came before the previous line's event (an attempt's end, said with the wait
    // after it, after the budget's line about it).
    let (mut back, mut from) = (0, 0);
    for line in &text {
        let line_text = line
            .strip_prefix("retry: ")
            .unwrap_or_else(|| panic!("{line}"));
        let wanted = line_numbers(line_text);
        let found = (from..json.len()).find(|&i| {
            let held: Vec<String> = json[back..=i].iter().flat_map(event_numbers).collect();
            wanted.iter().all(|n| held.contains(n))
        });
        let Some(i) = found else {
            panic!(
                "{args:?}: no JSON events from #{back} hold {wanted:?} of the line {line:?}\n\
                 text:\n{}\njson:\n{json:#?}",
                text.join("\n")
            );
        };
        (back, from) = (from, i);
    }
    assert!(
        json.len() >= text.len().div_ceil(2),
        "{args:?}: {} events for {} lines",
        json.len(),
        text.len()
    );
    text.len()
}

#[test]
fn the_events_of_retries_hooks_and_a_give_up_carry_their_lines() {
    let lines = carries(&[
        "-n",
        "2",
        "-b",
        "10ms",
        "--on-retry",
        "exit 4",
        "--on-give-up",
        "true",
        "--",
        "sh",
        "-c",
        "echo x >&2; exit 3",
    ]);
    assert!(lines >= 8, "{lines}");
}

#[test]
fn the_events_of_the_loop_shapes_carry_their_lines() {
    carries(&["--until-fail", "-n", "2", "-b", "1ms", "--", "true"]);
    carries(&["--successes", "3", "-n", "5", "-b", "1ms", "--", "true"]);
    carries(&[
        "--forever",
        "-n",
        "1",
        "--reset-after",
        "1h",
        "-b",
        "1ms",
        "--",
        "sh",
        "-c",
        "exit 9",
    ]);
    carries(&[
        "--reset-after",
        "100ms",
        "-n",
        "1",
        "-b",
        "1ms",
        "--",
        "sh",
        "-c",
        "test $RETRY_ATTEMPT = 1 && sleep 0.3; exit 5",
    ]);
}

#[test]
fn the_events_of_splay_lock_budget_and_env_file_carry_their_lines() {
    carries(&[
        "--splay",
        "20ms",
        "--lock",
        "{dir}/lock",
        "--budget",
        "api",
        "--budget-store",
        "{dir}/budgets",
        "-n",
        "3",
        "-b",
        "1ms",
        "--",
        "sh",
        "-c",
        "echo COUNT=$RETRY_ATTEMPT >> \"$RETRY_ENV_FILE\"; test $RETRY_ATTEMPT -ge 3",
    ]);
}

#[test]
fn the_events_of_retry_s_own_problems_carry_their_lines() {
    // A command that is not found, a hint that is not one, a timeout, a stop by output.
    carries(&["-n", "1", "-b", "1ms", "--", "no-such-command-of-retry's"]);
    carries(&[
        "-n",
        "1",
        "-b",
        "1ms",
        "--delay-from-output",
        "wait (\\S+)",
        "--",
        "sh",
        "-c",
        "echo 'wait soon'; exit 1",
    ]);
    carries(&[
        "-n",
        "1",
        "-b",
        "1ms",
        "--timeout",
        "50ms",
        "--",
        "sleep",
        "5",
    ]);
    carries(&[
        "-n",
        "4",
        "-b",
        "1ms",
        "--stop-if-output",
        "fatal",
        "--",
        "sh",
        "-c",
        "echo fatal 42; exit 6",
    ]);
}
