//! Transient failures by name (`--transient`, issue 43): the classes a user types
//! ([`Class`]), the one built-in table of the messages and exit statuses that mark a failure
//! as one that may succeed later (`table.rs`), and the matcher that reads an attempt's output
//! lines against it ([`Classifier`]).
//!
//! The idea is the field's: retry transient failures, fail at once on permanent ones (the AWS
//! Builders' Library, "Timeouts, retries, and backoff with jitter",
//! <https://aws.amazon.com/builders-library/timeouts-retries-and-backoff-with-jitter/>; Google
//! Cloud's retry strategy, <https://cloud.google.com/storage/docs/retry-strategy>; Envoy's
//! `retry_on` classes,
//! <https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_filters/router_filter#x-envoy-retry-on>).

mod table;

use std::fmt;

use regex::bytes::{RegexSet, RegexSetBuilder};

pub use table::{EXITS, Exit, ROWS, Row};

/// A class of transient failure, by the name a user types in `--transient=CLASSES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// retry stopped the attempt at `--timeout` or `--idle-timeout`, or the command said it
    /// timed out.
    Timeout,
    /// A name lookup failed for a reason that may pass.
    Dns,
    /// No connection could be made.
    Connect,
    /// The connection broke.
    Reset,
    /// A TLS handshake failed for a reason that may pass (not a certificate that does not
    /// verify).
    Tls,
    /// The last HTTP response has a status that is retried (`--http-retry-on`), or the command
    /// said so.
    Http,
    /// The server said the client asks too often.
    RateLimit,
    /// A lock or resource another process holds.
    Busy,
    /// A line matched `--transient-pattern`.
    Pattern,
}

impl Class {
    /// Every class, in the order the help lists them; [`Class::Pattern`] last.
    pub const ALL: [Class; 9] = [
        Class::Timeout,
        Class::Dns,
        Class::Connect,
        Class::Reset,
        Class::Tls,
        Class::Http,
        Class::RateLimit,
        Class::Busy,
        Class::Pattern,
    ];

    /// Its name, as typed and as shown (`rate-limit`).
    pub const fn name(self) -> &'static str {
        match self {
            Class::Timeout => "timeout",
            Class::Dns => "dns",
            Class::Connect => "connect",
            Class::Reset => "reset",
            Class::Tls => "tls",
            Class::Http => "http",
            Class::RateLimit => "rate-limit",
            Class::Busy => "busy",
            Class::Pattern => "pattern",
        }
    }

    /// The class named `name` (exactly, as [`Class::name`] gives it); `None` for another.
    pub fn named(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The built-in table compiled once: which class a line of output names, if any.
pub struct Classifier {
    set: RegexSet,
}

impl fmt::Debug for Classifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Classifier({} rows)", self.set.len())
    }
}

impl Classifier {
    /// The table's patterns ([`ROWS`]), case-insensitive.
    ///
    /// # Panics
    /// Never for the built-in table (a unit test compiles it).
    pub fn built_in() -> Classifier {
        let set = RegexSetBuilder::new(ROWS.iter().map(|r| r.pattern))
            .case_insensitive(true)
            .build()
            .expect("the built-in table of transient messages compiles");
        Classifier { set }
    }

    /// The class of the first row of the table that `line` (one line of output, as bytes)
    /// matches, if one does.
    pub fn class_of(&self, line: &[u8]) -> Option<Class> {
        self.set.matches(line).iter().next().map(|i| ROWS[i].class)
    }
}

/// A set of classes: what `--transient=CLASSES` retries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Classes(u16);

impl Classes {
    /// Every class (`--transient` alone, `RETRY_TRANSIENT=1`).
    pub fn all() -> Classes {
        Class::ALL.into_iter().fold(Classes(0), Classes::with)
    }

    /// This set and `class`.
    pub fn with(self, class: Class) -> Classes {
        Classes(self.0 | 1 << class as u16)
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the two sets share a class.
    pub fn meets(self, other: Classes) -> bool {
        self.0 & other.0 != 0
    }

    /// Both sets' classes.
    pub fn union(self, other: Classes) -> Classes {
        Classes(self.0 | other.0)
    }

    /// Whether `class` is in the set.
    pub fn contains(self, class: Class) -> bool {
        self.0 & (1 << class as u16) != 0
    }

    /// The classes of a comma-separated `list` (`dns,connect,timeout`).
    ///
    /// # Errors
    /// The first name that is not a class (an empty one included).
    pub fn parse_list(list: &str) -> Result<Classes, String> {
        list.split(',').try_fold(Classes(0), |set, name| {
            Class::named(name.trim())
                .map(|class| set.with(class))
                .ok_or_else(|| name.to_string())
        })
    }
}

impl fmt::Display for Classes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Class::ALL
            .into_iter()
            .filter(|c| self.contains(*c))
            .map(Class::name)
            .collect();
        f.write_str(&names.join(","))
    }
}

/// The table as `retry --generate transient-table` prints it: a block per row (its class,
/// pattern, programs and source), then the exit statuses of known programs.
pub fn table_text() -> String {
    let mut text = String::from(
        "# The transient failures --transient knows: a line of an attempt's output that\n\
         # matches PATTERN (case-insensitive) names CLASS.\n",
    );
    for row in ROWS {
        text.push_str(&format!(
            "\nclass:    {}\npattern:  {}\nprograms: {}\nsource:   {}\n",
            row.class, row.pattern, row.programs, row.source
        ));
    }
    text.push_str("\n# Exit statuses of known programs, run as the command itself.\n");
    for exit in EXITS {
        text.push_str(&format!(
            "\n{} {}: {} ({})",
            exit.program, exit.status, exit.class, exit.source
        ));
    }
    text.push('\n');
    text
}

/// The class exit status `status` of `program` (its file name, as run) names, from the
/// program's documented exit statuses ([`EXITS`]); `None` for a status or a program not in it.
pub fn class_of_exit(program: &str, status: u8) -> Option<Class> {
    EXITS
        .iter()
        .find(|e| e.program == program && e.status == status)
        .map(|e| e.class)
}

#[cfg(test)]
mod tests;
