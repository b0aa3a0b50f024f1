//! Published backoff policies, selectable with `--preset`; each cites its source.
//!
//! Sources: Google Cloud's retry guides
//! (<https://cloud.google.com/memorystore/docs/redis/exponential-backoff>,
//! <https://cloud.google.com/iam/docs/retry-strategy>); the AWS SDKs' standard retry mode
//! (<https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html>); gRPC
//! connection backoff (<https://github.com/grpc/grpc/blob/master/doc/connection-backoff.md>);
//! google-api-core's Python retry
//! (<https://github.com/googleapis/python-api-core/blob/main/google/api_core/retry/retry_base.py>).
//! A preset is only a layer of settings: [`crate::config`] decides what wins over it.

use std::time::Duration;

use clap::ValueEnum;

use crate::types::RetryLimit;
use retry_tool_backoff::Jitter;

/// A published retry policy. The doc comment of each variant is its `--help` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Preset {
    /// Google Cloud retry guides (Memorystore, IAM): 1s doubling plus up to 1s random
    /// (additive jitter), cap 64s
    Gcp,
    /// AWS SDK standard retry mode: full jitter, base 1s, x2, cap 20s, 3 attempts in all
    Aws,
    /// gRPC connection backoff (grpc/grpc doc/connection-backoff.md): 1s, x1.6, +/-20%
    /// (proportional jitter), cap 120s
    Grpc,
    /// google-api-core retry (Python): 1s, x2, cap 60s, full jitter, retries until a deadline
    /// of 120s
    #[value(name = "api-core")]
    ApiCore,
}

/// A partial set of backoff and stopping settings: what one source (a preset, the environment,
/// the command line) says; `None` where it says nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Settings {
    /// The first delay.
    pub base: Option<Duration>,
    /// Growth per retry (finite, `>= 1`).
    pub multiplier: Option<f64>,
    /// The largest single delay.
    pub cap: Option<Duration>,
    /// The jitter mode.
    pub jitter: Option<Jitter>,
    /// Retries after the first attempt, or unlimited.
    pub max_retries: Option<RetryLimit>,
    /// Total time budget from the start.
    pub deadline: Option<Duration>,
}

impl Preset {
    /// The settings the source publishes; the rest stay at retry's defaults.
    pub fn settings(self) -> Settings {
        let secs = Duration::from_secs;
        match self {
            // `min((2^n) + random_number_milliseconds, maximum_backoff)`, the random part at
            // most 1000 ms, `maximum_backoff` 32 or 64 s: additive jitter draws U(0, base).
            Preset::Gcp => Settings {
                base: Some(secs(1)),
                multiplier: Some(2.0),
                cap: Some(secs(64)),
                jitter: Some(Jitter::Additive),
                ..Settings::default()
            },
            // `rand * min(2^(i-1) s, 20 s)`, max attempts 3 (the first attempt included).
            Preset::Aws => Settings {
                base: Some(secs(1)),
                multiplier: Some(2.0),
                cap: Some(secs(20)),
                jitter: Some(Jitter::Full),
                max_retries: Some(RetryLimit(Some(2))),
                ..Settings::default()
            },
            // INITIAL_BACKOFF 1 s, MULTIPLIER 1.6, JITTER 0.2, MAX_BACKOFF 120 s. gRPC
            // reconnects without limit; retry keeps its own limit unless told otherwise.
            Preset::Grpc => Settings {
                base: Some(secs(1)),
                multiplier: Some(1.6),
                cap: Some(secs(120)),
                jitter: Some(Jitter::Proportional),
                ..Settings::default()
            },
            // initial 1 s, multiplier 2, maximum 60 s, timeout 120 s, `U(0, d)`: no attempt
            // limit, the timeout alone ends the retrying.
            Preset::ApiCore => Settings {
                base: Some(secs(1)),
                multiplier: Some(2.0),
                cap: Some(secs(60)),
                jitter: Some(Jitter::Full),
                max_retries: Some(RetryLimit(None)),
                deadline: Some(secs(120)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_a_valid_policy() {
        for &p in Preset::value_variants() {
            let s = p.settings();
            let (base, cap) = (s.base.unwrap(), s.cap.unwrap());
            assert!(base <= cap, "{p:?}");
            assert!(s.multiplier.unwrap() >= 1.0);
            assert!(s.jitter.is_some());
        }
    }
}
