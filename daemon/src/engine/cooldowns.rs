//! Cooldowns: shared, only growing, escalating on repeated 429s, one probe when they end.

use super::*;

/// One cooldown on a key or a prefix: until when, why, how often it escalated.
#[derive(Clone, Debug)]
pub(super) struct CooldownEntry {
    pub(super) until: Instant,
    pub(super) reason: String,
    /// When it was last installed or escalated: 429s from leases granted before this do not
    /// escalate it again (they were already in flight).
    pub(super) started: Instant,
    pub(super) strikes: u32,
    /// The lease sent first after the cooldown ended; the rest wait for its result.
    pub(super) probe: Option<u64>,
    /// Set when a daily quota is spent (which one, "requests per day"): every Acquire under
    /// it is answered at once, DAILY_QUOTA.
    pub(super) daily: Option<String>,
}

/// Where a cooldown comes from: this limiter (a fleet hears of it when it grows) or another
/// host of its fleet (not shared back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Origin {
    Here,
    Fleet,
}

impl Engine {
    /// Installs or extends a cooldown on a key name (and so its descendants). The provider's
    /// delay is a floor; a 429 from a lease granted after the last one escalates; a cooldown
    /// never shortens. Returns the deadline.
    pub(super) fn install_cooldown(
        &mut self,
        name: &str,
        provider_delay: Option<Duration>,
        reason: String,
        granted_at: Option<Instant>,
        origin: Origin,
        at: Now,
    ) -> Result<Instant, EngineError> {
        let base = self.config.cooldown_base;
        self.install_cooldown_from(name, provider_delay, base, reason, granted_at, origin, at)
    }

    /// `install_cooldown` whose first backoff (for a refusal that names no delay) is `base`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn install_cooldown_from(
        &mut self,
        name: &str,
        provider_delay: Option<Duration>,
        base: Duration,
        reason: String,
        granted_at: Option<Instant>,
        origin: Origin,
        at: Now,
    ) -> Result<Instant, EngineError> {
        let now = at.mono;
        if !self.cooldowns.contains_key(name) && self.cooldowns.len() >= self.config.max_keys {
            self.cooldowns
                .retain(|_, c| now < c.until || c.probe.is_some());
            if self.cooldowns.len() >= self.config.max_keys {
                return Err(EngineError::Exhausted {
                    what: "cooldowns",
                    limit: self.config.max_keys,
                    setting: "max_keys",
                });
            }
        }
        let cap = self.config.cooldown_max;
        let entry = self
            .cooldowns
            .entry(name.to_string())
            .or_insert(CooldownEntry {
                until: now,
                reason: String::new(),
                started: now,
                strikes: 0,
                probe: None,
                daily: None,
            });
        let escalates = match granted_at {
            Some(g) => entry.strikes == 0 || g > entry.started,
            None => false,
        };
        let mut delay = provider_delay.unwrap_or_default();
        if escalates {
            entry.strikes += 1;
            entry.started = now;
            // The first 429 waits what the provider says (the rate is lowered meanwhile); only
            // a 429 that names no delay, or one after the cooldown began, backs off further.
            let backoff = base
                .saturating_mul(1u32 << (entry.strikes - 1).min(20))
                .min(cap);
            if provider_delay.is_none() || entry.strikes > 1 {
                delay = delay.max(backoff);
            }
        }
        let until = now + delay;
        let extended = until > entry.until;
        if extended {
            entry.until = until;
            entry.reason = reason.clone();
            // What extends it now says why: a daily quota sets its mark again after this.
            entry.daily = None;
        }
        let (until, strikes) = (entry.until, entry.strikes);
        self.cooldowns_dirty = true;
        if extended {
            self.cool_lines(name, until, now);
            if origin == Origin::Here {
                self.share_cooldown(name, at.unix_of(until), &reason);
            }
            let secs = until.saturating_duration_since(now).as_secs_f64();
            let escalation = if strikes > 1 {
                format!(", 429 number {strikes} in a row")
            } else {
                String::new()
            };
            self.event(
                at,
                name,
                EventKind::Cooldown,
                format!("cooling down for {secs:.1} s: {reason}{escalation}"),
            );
        }
        Ok(until)
    }

    /// A daily quota the provider says is spent: a quota cooldown on the key until the stated
    /// reset, under which every Acquire is answered at once (DAILY_QUOTA). It neither escalates
    /// nor says anything of the minute's rate.
    pub(super) fn install_daily(
        &mut self,
        name: &str,
        quota: &super::daily::DailyQuota,
        origin: Origin,
        now: Now,
    ) -> Result<Instant, EngineError> {
        let label = quota.label();
        let until_ms = now.unix_ms + quota.resets_in.as_millis() as i64;
        let reason = daily_reason(&label, until_ms);
        self.install_quota(name, label, reason, quota.resets_in, origin, now)
    }

    /// A quota cooldown (a daily quota, a plan window) on `name` for `resets_in`, marked with
    /// which quota it is (`label`): every Acquire under it is answered at once.
    pub(super) fn install_quota(
        &mut self,
        name: &str,
        label: String,
        reason: String,
        resets_in: Duration,
        origin: Origin,
        now: Now,
    ) -> Result<Instant, EngineError> {
        let until = self.install_cooldown(name, Some(resets_in), reason, None, origin, now)?;
        if let Some(c) = self.cooldowns.get_mut(name) {
            c.daily = Some(label);
        }
        Ok(until)
    }

    /// The daily quota spent on a key or an ancestor, if any: until when, and which.
    pub(super) fn daily_on(&self, id: KeyId, now: Instant) -> Option<(Instant, String)> {
        self.cooldowns_on(&self.keys[id].name)
            .filter(|(_, c)| now < c.until)
            .find_map(|(_, c)| c.daily.clone().map(|d| (c.until, d)))
    }

    /// `Cooldown`: nothing is granted on `key` or below it before `now + duration`.
    pub fn cooldown(
        &mut self,
        key: &str,
        duration: Duration,
        reason: &str,
        now: Now,
    ) -> Result<i64, EngineError> {
        validate_key(key)?;
        if duration.is_zero() || duration > MAX_COOLDOWN {
            return Err(EngineError::InvalidArgument(format!(
                "cooldown of {} ms is out of range; give from 1 ms to 24 h",
                duration.as_millis()
            )));
        }
        // The key shows in status even if nothing was acquired on it yet.
        self.resolve(key)?;
        let reason = if reason.is_empty() {
            "set by Cooldown".to_string()
        } else {
            reason.to_string()
        };
        let until = self.install_cooldown(key, Some(duration), reason, None, Origin::Here, now)?;
        self.pump(now);
        Ok(now.unix_of(until))
    }

    pub(super) fn cooldowns_reason(&self, id: KeyId, now: Instant) -> Option<String> {
        self.cooldowns_on(&self.keys[id].name)
            .find(|(_, c)| now < c.until)
            .map(|(_, c)| c.reason.clone())
    }

    /// The cooldown entries on a key name and its ancestor names (a cooldown covers the
    /// descendants of the key it was set on), nearest first.
    pub(super) fn cooldowns_on<'a>(
        &'a self,
        key: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a CooldownEntry)> + 'a {
        std::iter::once(key)
            .chain(ancestors(key))
            .filter_map(|n| self.cooldowns.get(n).map(|c| (n, c)))
    }
}

/// How a daily quota's cooldown reads (status, top, events, the fleet's channel).
pub const DAILY_REASON: &str = "daily quota exhausted";

/// How a closed plan window's cooldown reads.
pub const WINDOW_REASON: &str = "plan window closed";

pub(super) use llmctl_common::time::utc;

fn daily_reason(label: &str, until_unix_ms: i64) -> String {
    format!("{DAILY_REASON} ({label}) until {}", utc(until_unix_ms))
}

/// `plan window closed (5-hour window) at 100 % used until 2026-12-02 18:00:00 UTC`.
pub(super) fn window_reason(label: &str, used: Option<f64>, until_unix_ms: i64) -> String {
    let used = used
        .map(|u| format!(" at {:.0} % used", u * 100.0))
        .unwrap_or_default();
    format!(
        "{WINDOW_REASON} ({label}){used} until {}",
        utc(until_unix_ms)
    )
}

/// The quota a quota cooldown's reason names ("requests per day", "5-hour window"), when it
/// is one.
pub(super) fn daily_label(reason: &str) -> Option<String> {
    let rest = reason
        .strip_prefix(DAILY_REASON)
        .or_else(|| reason.strip_prefix(WINDOW_REASON))?
        .trim_start()
        .strip_prefix('(')?;
    rest.split_once(')').map(|(l, _)| l.to_string())
}

/// Whether a quota's label is a plan window's ("5-hour window") rather than a daily quota's.
pub fn is_window(label: &str) -> bool {
    label.contains("window")
}

/// A spent quota in words: "the plan's 5-hour window", "the provider's daily quota (requests
/// per day)".
pub(super) fn quota_words(label: &str) -> String {
    if is_window(label) {
        format!("the plan's {label}")
    } else {
        format!("the provider's daily quota ({label})")
    }
}
