//! Plan windows in a key's state: what its answers said of them (`plan.rs` reads them), a
//! warning past `warn_at`, and a closed window as a quota cooldown on the account until it
//! resets, like a daily quota.

use super::plan::{ClosedWindow, PlanSignals, PlanWindow};
use super::*;

/// The share of a window past which an event warns, when no key sets `warn_at`.
pub const DEFAULT_WARN_AT: f64 = 0.9;

/// Windows a key keeps at most (Anthropic sends 5h, 7d and per-model 7d windows).
const MAX_WINDOWS: usize = 8;

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

/// The account a plan belongs to: the first part of a key's name (`anthropic` of
/// `anthropic/claude-sonnet-4-5`); every model under it draws on the same windows.
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
        std::iter::once(&self.keys[id].name)
            .map(String::as_str)
            .chain(ancestors(&self.keys[id].name))
            .find_map(|n| self.index.get(n).and_then(|&a| self.keys[a].warn_at))
            .unwrap_or(DEFAULT_WARN_AT)
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
        let account = account_of(&key.name).to_string();
        let label = closed.label();
        let reason = cooldowns::window_reason(&label, closed.used, resets_at);
        self.install_quota(
            &account,
            label,
            reason,
            closed.resets_in,
            cooldowns::Origin::Here,
            now,
        )?;
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
    pub(super) fn restore_plan(&mut self, id: KeyId, saved_unix_ms: i64) {
        let headers = self.keys[id].last_headers.clone();
        let signals = super::headers::ProviderSignals::parse(
            headers.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            "",
            saved_unix_ms,
        );
        self.keys[id].plan.take_in(&signals.plan);
    }
}
