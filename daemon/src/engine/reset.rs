//! `Reset`: an operator's way out when a key holds what it should not (a learned limit from a
//! bad header, debt from an absurd report, a cooldown, an open breaker).

use super::*;

/// What a reset cleared, for the caller and the log.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResetSummary {
    pub learned_limits: usize,
    pub debt: f64,
    pub cooldown: bool,
    pub breaker: bool,
}

impl Engine {
    /// Forgets what `key` learned (limits from headers and probing, the last headers), its debt,
    /// its cooldown and its breaker. Configured limits stay; a key nothing configures starts
    /// over as on first contact.
    pub fn reset(&mut self, key: &str, now: Now) -> Result<ResetSummary, EngineError> {
        validate_key(key)?;
        let Some(&id) = self.index.get(key) else {
            return Err(EngineError::InvalidArgument(format!(
                "key \"{}\" is not known to the daemon; `llmctl status` lists the keys",
                text::printable_prefix(key)
            )));
        };
        let mut summary = ResetSummary::default();
        let k = &mut self.keys[id];
        let before = k.buckets.len();
        k.buckets.retain(|b| b.configured_rate().is_some());
        summary.learned_limits = before - k.buckets.len();
        for b in &mut k.buckets {
            let (learned, debt) = b.forget_learned(now.mono);
            if learned {
                summary.learned_limits += 1;
            }
            summary.debt += debt;
        }
        k.contacted = false;
        k.last_headers = Arc::default();
        if k.breaker.open_until().is_some() {
            summary.breaker = true;
        }
        k.breaker = breaker::Breaker::default();
        summary.cooldown = self.cooldowns.remove(key).is_some();
        if summary.cooldown {
            self.cooldowns_dirty = true;
        }
        self.mark_dirty(id);
        self.event(
            now,
            key,
            EventKind::Reset,
            format!(
                "reset by an operator: {} learned limit(s), {:.0} of debt, cooldown {}, breaker {}",
                summary.learned_limits,
                summary.debt,
                if summary.cooldown { "ended" } else { "none" },
                if summary.breaker {
                    "closed"
                } else {
                    "closed already"
                }
            ),
        );
        self.pump(now);
        Ok(summary)
    }
}
