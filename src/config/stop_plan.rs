//! The settings of a run that retry's words on stopping an attempt show: the
//! [`StopPlan`] of a [`Config`], filled here so that [`crate::report`] never sees the config.

use super::Config;
use crate::report::StopPlan;

impl StopPlan {
    /// The plan of a run's `config`.
    pub fn of(config: &Config) -> StopPlan {
        StopPlan {
            timeout: config.timeout,
            idle: config.pipeline.idle_timeout,
            deadline: config.deadline,
            signal: config.stop_signal,
            kill_after: config.kill_after,
            preserve: config.rules.preserve_status,
        }
    }
}
