//! What one host tells the others: its cooldowns and its provider's headers.

use super::*;

/// Cooldowns kept for the fleet, at most this many between two takes (the oldest go).
const SHARED_COOLDOWNS_KEPT: usize = 1024;

impl Engine {
    /// Headers another host's provider answered with on `key`: the limits they name are
    /// learned here too, and they become the key's last headers. Returns the key's change count
    /// of its headers after them (None: the key is not known here).
    pub fn apply_shared_headers(
        &mut self,
        key: &str,
        headers: &[(String, String)],
        now: Now,
    ) -> Option<u64> {
        let &id = self.index.get(key)?;
        let pairs = headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        let outcome = Outcome {
            signals: ProviderSignals::parse(pairs, "", now.unix_ms),
            headers: headers.to_vec(),
            ..Outcome::default()
        };
        self.apply_headers(id, &outcome, now);
        self.pump(now);
        Some(self.keys[id].headers_seq)
    }

    /// Cooldowns installed here since the last take (fleet mode only), for the other hosts.
    pub fn take_shared_cooldowns(&mut self) -> Vec<SharedCooldown> {
        self.shared_cooldowns
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Records a cooldown installed here for the fleet.
    pub(in crate::engine) fn share_cooldown(
        &mut self,
        key: &str,
        until_unix_ms: i64,
        reason: &str,
    ) {
        if let Some(out) = &mut self.shared_cooldowns {
            if out.len() == SHARED_COOLDOWNS_KEPT {
                out.remove(0);
            }
            out.push(SharedCooldown {
                key: key.to_string(),
                until_unix_ms,
                reason: reason.to_string(),
            });
        }
    }

    /// A cooldown another host installed: nothing is granted on `key` or below it before
    /// `until_unix_ms`. It is not shared again. True when it extended what was here.
    pub fn apply_shared_cooldown(
        &mut self,
        key: &str,
        until_unix_ms: i64,
        reason: &str,
        now: Now,
    ) -> Result<bool, EngineError> {
        validate_key(key)?;
        let left = until_unix_ms.saturating_sub(now.unix_ms);
        if left <= 0 {
            return Ok(false);
        }
        let duration = Duration::from_millis(left as u64).min(MAX_COOLDOWN);
        let before = self.cooldowns.get(key).map(|c| c.until);
        let until = self.install_cooldown(
            key,
            Some(duration),
            reason.to_string(),
            None,
            super::cooldowns::Origin::Fleet,
            now,
        )?;
        // Another host's daily quota is this host's too: answered at once as such.
        if let Some(label) = super::cooldowns::daily_label(reason) {
            if let Some(c) = self.cooldowns.get_mut(key) {
                c.daily = Some(label);
            }
        }
        self.pump(now);
        Ok(before.is_none_or(|b| until > b))
    }
}
