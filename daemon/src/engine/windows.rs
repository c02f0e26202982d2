//! Plan windows in a key's state: what its answers said of them (`plan.rs` reads them), a
//! warning past `warn_at`, and a closed window as a quota cooldown on the account until it
//! resets, like a daily quota.

use super::plan::{ClosedWindow, PlanSignals, PlanWindow};
use super::*;

/// The share of a window past which an event warns, when no key sets `warn_at`.
pub const DEFAULT_WARN_AT: f64 = 0.9;

/// Windows a key keeps at most (Anthropic sends 5h, 7d and per-model 7d windows).
const MAX_WINDOWS: usize = 8;

/// Of a paced window, the share of its budget usable at once, beyond its pace: a burst of
/// agents starting together is not held back for a tenth of the window.
pub const PACE_SLACK: f64 = 0.1;

/// What a key knows of its plan's windows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanState {
    pub windows: Vec<PlanWindow>,
    /// The window that binds, as the provider last said.
    pub binding: Option<String>,
    /// The plan's status as a whole (`allowed`, `allowed_warning`, `rejected`).
    pub status: Option<String>,
    /// The windows warned of, with the reset they were warned at (warned again after it).
    warned: Vec<(String, Option<i64>)>,
    /// Each window's reset on the engine's clock, by name (for pacing, which has no wall
    /// clock).
    resets_mono: Vec<(String, Instant)>,
}

/// What status shows of one window.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowStatus {
    pub window: PlanWindow,
    pub label: String,
    /// Refusing until its reset (a quota cooldown on the key or an ancestor names it).
    pub closed: bool,
    pub binding: bool,
}

impl PlanState {
    /// Each window's reset on the engine's clock, as of `now`.
    fn clock_resets(&mut self, now: Now) {
        self.resets_mono = self
            .windows
            .iter()
            .filter_map(|w| {
                let at = w.resets_at_unix_ms?;
                let ahead = Duration::from_millis((at - now.unix_ms).max(0) as u64);
                Some((w.name.clone(), now.mono + ahead))
            })
            .collect();
    }

    fn take_in(&mut self, signals: &PlanSignals) {
        for w in &signals.windows {
            match self.windows.iter().position(|o| o.name == w.name) {
                Some(i) => self.windows[i] = w.clone(),
                None if self.windows.len() < MAX_WINDOWS => self.windows.push(w.clone()),
                None => {}
            }
        }
        if signals.binding.is_some() {
            self.binding = signals.binding.clone();
        }
        if signals.status.is_some() {
            self.status = signals.status.clone();
        }
    }
}

/// A window's length: as stated, else as its name says (`5h`, `7d`), else 5 hours.
fn window_length(w: &PlanWindow) -> Duration {
    let minutes = w.minutes.map(u64::from).or_else(|| {
        let len = w.name.split('_').next().unwrap_or("");
        let digits: String = len.chars().take_while(char::is_ascii_digit).collect();
        let n: u64 = digits.parse().ok()?;
        match &len[digits.len()..] {
            "m" => Some(n),
            "h" => Some(n * 60),
            "d" => Some(n * 1440),
            _ => None,
        }
    });
    Duration::from_secs(minutes.unwrap_or(300).max(1) * 60)
}

/// The account a plan belongs to: the first part of a key's name (`anthropic` of
/// `anthropic/claude-sonnet-4-5`); every model under it whose answers carry the plan draws on
/// the same windows.
pub(super) fn account_of(key: &str) -> &str {
    key.split('/').next().unwrap_or(key)
}

impl Engine {
    /// Takes in what an answer said of the plan's windows, and warns of one past `warn_at`.
    pub(super) fn learn_plan(&mut self, id: KeyId, signals: &PlanSignals, now: Now) {
        if signals.is_empty() {
            return;
        }
        let warn_at = self.warn_at_of(id);
        let key = &mut self.keys[id];
        key.plan.take_in(signals);
        key.plan.clock_resets(now);
        let mut warnings = Vec::new();
        let PlanState {
            windows, warned, ..
        } = &mut key.plan;
        warned.retain(|(name, _)| {
            windows
                .iter()
                .any(|w| &w.name == name && w.used.is_some_and(|u| u >= warn_at))
        });
        for w in windows.iter() {
            let Some(used) = w.used.filter(|u| *u >= warn_at) else {
                continue;
            };
            let already = warned
                .iter()
                .any(|(n, r)| *n == w.name && *r == w.resets_at_unix_ms);
            if already {
                continue;
            }
            warned.retain(|(n, _)| *n != w.name);
            warned.push((w.name.clone(), w.resets_at_unix_ms));
            let resets = w
                .resets_at_unix_ms
                .map(|at| format!(", resets at {}", cooldowns::utc(at)))
                .unwrap_or_default();
            warnings.push(format!(
                "the plan's {} is {:.0} % used (warn_at {:.0} %){resets}",
                w.label(),
                used * 100.0,
                warn_at * 100.0
            ));
        }
        let name = key.name.clone();
        for message in warnings {
            self.event(now, &name, EventKind::PlanWindow, message);
        }
    }

    /// `warn_at` of the key or its nearest ancestor that sets it.
    fn warn_at_of(&self, id: KeyId) -> f64 {
        self.nearest(id, |k| k.warn_at).unwrap_or(DEFAULT_WARN_AT)
    }

    /// A setting of the key or of its nearest ancestor that has it.
    fn nearest<T>(&self, id: KeyId, get: impl Fn(&KeyState) -> Option<T>) -> Option<T> {
        std::iter::once(&self.keys[id].name)
            .map(String::as_str)
            .chain(ancestors(&self.keys[id].name))
            .find_map(|n| self.index.get(n).and_then(|&a| get(&self.keys[a])))
    }

    /// Pacing to `window_budget`: until when a request on `id` waits so that no window of its
    /// plan is used faster than its budget spread over the window (a tenth of the budget,
    /// `PACE_SLACK`, usable at once), and why; None when it need not wait. A window whose
    /// budget is spent waits for its reset.
    pub(super) fn window_pace(&self, id: KeyId, now: Instant) -> Option<(Instant, String)> {
        let plan = &self.keys[id].plan;
        // Most keys have no plan: no walk of their ancestors on every Acquire for them.
        if plan.windows.is_empty() {
            return None;
        }
        let budget = self.nearest(id, |k| k.window_budget)?;
        let mut wait: Option<(Instant, String)> = None;
        for w in &plan.windows {
            let (Some(used), Some(&(_, resets))) =
                (w.used, plan.resets_mono.iter().find(|(n, _)| *n == w.name))
            else {
                continue;
            };
            if resets <= now {
                continue;
            }
            let length = window_length(w);
            let left = resets.duration_since(now).min(length);
            let elapsed = 1.0 - left.as_secs_f64() / length.as_secs_f64();
            let allowed = budget * (elapsed + PACE_SLACK).min(1.0);
            if used <= allowed {
                continue;
            }
            let until = if used >= budget {
                resets
            } else {
                // When the pace reaches what is used: elapsed = used / budget - slack.
                let at = (used / budget - PACE_SLACK).clamp(0.0, 1.0);
                resets - length.mul_f64(1.0 - at)
            };
            let why = format!(
                "the plan's {} is {:.0} % used, paced to window_budget {:.0} % over it",
                w.label(),
                used * 100.0,
                budget * 100.0
            );
            if wait.as_ref().is_none_or(|(u, _)| until > *u) {
                wait = Some((until, why));
            }
        }
        wait
    }

    /// A refusal that says a plan window is closed: counted, and a quota cooldown on the
    /// account until the window resets, under which every Acquire is answered at once.
    pub(super) fn window_refused(
        &mut self,
        lease: &Lease,
        closed: &ClosedWindow,
        now: Now,
    ) -> Result<(), EngineError> {
        self.count_refusal(lease, now);
        let key = &mut self.keys[lease.key];
        let resets_at = now.unix_ms + closed.resets_in.as_millis() as i64;
        // What the refusal said stands in the key's state even where no header said it.
        match key.plan.windows.iter().position(|w| w.name == closed.name) {
            Some(i) => {
                let w = &mut key.plan.windows[i];
                w.used = Some(w.used.unwrap_or(1.0).max(1.0));
                w.resets_at_unix_ms = Some(resets_at);
            }
            None if key.plan.windows.len() < MAX_WINDOWS => key.plan.windows.push(PlanWindow {
                name: closed.name.clone(),
                used: Some(1.0),
                resets_at_unix_ms: Some(resets_at),
                minutes: None,
                status: Some("rejected".into()),
            }),
            None => {}
        }
        // The plan's credential is closed, not the provider: every key of the account whose
        // answers carry the plan (an API key's answers never do), this one included.
        let account = account_of(&key.name).to_string();
        let plan_keys: Vec<String> = self
            .keys
            .iter()
            .filter(|k| account_of(&k.name) == account && k.carries_plan())
            .map(|k| k.name.clone())
            .collect();
        let label = closed.label();
        let reason = cooldowns::window_reason(&label, closed.used, resets_at);
        for name in plan_keys {
            self.install_quota(
                &name,
                label.clone(),
                reason.clone(),
                closed.resets_in,
                cooldowns::Origin::Here,
                now,
            )?;
        }
        Ok(())
    }

    /// What status shows of a key's windows.
    pub(super) fn windows_status(&self, id: KeyId, now: Now) -> Vec<WindowStatus> {
        let key = &self.keys[id];
        let closed = self.daily_on(id, now.mono).map(|(_, label)| label);
        key.plan
            .windows
            .iter()
            .map(|w| {
                let mut window = w.clone();
                // A window past its reset starts again: nothing is known used of the new one.
                if w.resets_at_unix_ms.is_some_and(|r| r <= now.unix_ms) {
                    window.used = Some(0.0);
                }
                let label = w.label();
                WindowStatus {
                    closed: closed.as_deref() == Some(label.as_str()),
                    binding: key.plan.binding.as_deref() == Some(w.name.as_str()),
                    label,
                    window,
                }
            })
            .collect()
    }

    /// Brings back what the saved headers said of the plan (their resets are times, so they
    /// hold across a restart).
    pub(super) fn restore_plan(&mut self, id: KeyId, saved_unix_ms: i64, now: Now) {
        let headers = self.keys[id].last_headers.clone();
        let signals = super::headers::ProviderSignals::parse(
            headers.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            "",
            saved_unix_ms,
        );
        let key = &mut self.keys[id];
        key.plan.take_in(&signals.plan);
        key.plan.clock_resets(now);
    }
}
