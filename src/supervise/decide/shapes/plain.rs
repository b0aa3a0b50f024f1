//! The plain loop: run until a success, retrying failures under the give-up rule.

use rand::Rng;
use retry_tool_backoff::GiveUpRule;

use super::super::{Decision, Ending, Facts, Streak};
use super::LoopShape;
use crate::status::Exit;

/// Until a success.
#[derive(Debug)]
pub(super) struct Plain;

impl LoopShape for Plain {
    fn after_attempt(
        &self,
        _: &Facts<'_>,
        _: &mut GiveUpRule,
        _: &mut Streak,
        _: &mut dyn Rng,
        _: Exit,
        succeeded: bool,
    ) -> Option<Decision> {
        succeeded.then_some(Decision::End(Ending::Succeed))
    }

    fn last_by_rule(&self) -> bool {
        true
    }
}
