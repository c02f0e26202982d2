//! Policy on top of the limiter: retry advice by profile, route groups and fallback, circuit
//! breakers, run budgets.

use super::breaker::{BreakerGate, Transition};
use super::routes::Condition;
use super::runs::{Run, RunBudget};
use super::EventKind;
use super::{
    AcquireRequest, Acquired, Action, Advice, Class, Engine, EngineError, Gate, KeyAttempt,
    KeyLimits, Lease, LeaseCtx, Need, Now, Outcome, Refusal, RefusalCode, MAX_KEY_BYTES,
};
use std::time::Duration;

/// Runs idle this long are forgotten first when the run table is full.
const RUN_IDLE: Duration = Duration::from_secs(3600);

/// What status shows of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunStatus {
    pub run_id: String,
    pub calls: u64,
    pub retries: u64,
    pub started_unix_ms: i64,
    pub wall: Duration,
    pub budget: RunBudget,
    /// Why it may make no more calls.
    pub exhausted: Option<String>,
}

/// A 400 or 413 that says the prompt is longer than the model takes.
fn is_context_length(outcome: &Outcome) -> bool {
    let text = format!("{} {}", outcome.error_type, outcome.error_message).to_ascii_lowercase();
    matches!(outcome.status, 400 | 413)
        && [
            "context_length",
            "context length",
            "prompt is too long",
            "maximum context",
            "too many tokens",
        ]
        .iter()
        .any(|n| text.contains(n))
}

impl Engine {
    pub(super) fn profile_index(&self, name: &str) -> Result<usize, EngineError> {
        self.config
            .profiles
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| {
                let known: Vec<&str> = self
                    .config
                    .profiles
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect();
                EngineError::InvalidArgument(format!(
                    "profile {name:?} is not configured; use one of {} or add [profiles.{name:?}]",
                    known.join(", ")
                ))
            })
    }

    /// Checks profiles, route groups and key profiles against each other.
    pub(super) fn check_policy(&self, keys: &[(String, KeyLimits)]) -> Result<(), EngineError> {
        let bad = |m: String| Err(EngineError::InvalidArgument(m));
        self.profile_index(&self.config.default_profile)?;
        for p in &self.config.profiles {
            if p.attempts == 0 {
                return bad(format!(
                    "profile {:?} has attempts = 0; give at least 1",
                    p.name
                ));
            }
        }
        for (name, limits) in keys {
            if let Some(p) = &limits.profile {
                self.profile_index(p)
                    .map_err(|e| EngineError::InvalidArgument(format!("[keys.{name:?}] {e}")))?;
            }
        }
        for g in &self.config.route_groups {
            if g.members.is_empty() {
                return bad(format!(
                    "route group {:?} has no members; list its keys in order",
                    g.name
                ));
            }
            for m in &g.members {
                super::validate_key(&m.key).map_err(|e| {
                    EngineError::InvalidArgument(format!("route group {:?}: {e}", g.name))
                })?;
            }
            if g.members.iter().all(|m| !m.when.is_empty()) {
                return bad(format!(
                    "route group {:?} has no member without `when`; the first key must serve plain requests",
                    g.name
                ));
            }
        }
        Ok(())
    }

    /// Refuses a call of a run past its budget; creates the run on its first call.
    pub(super) fn run_refusal(
        &mut self,
        req: &AcquireRequest,
        now: Now,
    ) -> Result<Option<Refusal>, EngineError> {
        if req.run_id.is_empty() {
            return Ok(None);
        }
        self.validate_run_id(&req.run_id)?;
        self.ensure_run(&req.run_id, now)?;
        let Some(run) = self.runs.get_mut(&req.run_id) else {
            return Ok(None);
        };
        run.last_seen = now.mono;
        Ok(run.exhausted(&req.run_id, now.mono).map(|reason| Refusal {
            key: if req.route_group.is_empty() {
                req.key.clone()
            } else {
                String::new()
            },
            not_before_unix_ms: 0,
            code: RefusalCode::RunBudget,
            reason,
            waited: Duration::ZERO,
        }))
    }

    fn validate_run_id(&self, run_id: &str) -> Result<(), EngineError> {
        super::text::check_name("run_id", run_id, false, MAX_KEY_BYTES, "agent-7")
            .map_err(EngineError::InvalidArgument)
    }

    fn ensure_run(&mut self, run_id: &str, now: Now) -> Result<(), EngineError> {
        if self.runs.contains_key(run_id) {
            return Ok(());
        }
        if self.runs.len() >= self.config.max_runs {
            self.runs
                .retain(|_, r| now.mono.saturating_duration_since(r.last_seen) < RUN_IDLE);
            if self.runs.len() >= self.config.max_runs {
                if let Some(done) = self.finished_run() {
                    self.runs.remove(&done);
                }
            }
            if self.runs.len() >= self.config.max_runs {
                return Err(EngineError::Exhausted {
                    what: "runs",
                    limit: self.config.max_runs,
                    setting: "max_runs",
                });
            }
        }
        let run = Run::new(self.config.run_budget.clone(), now.mono, now.unix_ms);
        self.runs.insert(run_id.to_string(), run);
        Ok(())
    }

    /// `SetRunBudget`: sets or replaces one run's budget.
    pub fn set_run_budget(
        &mut self,
        run_id: &str,
        budget: RunBudget,
        now: Now,
    ) -> Result<(), EngineError> {
        if run_id.is_empty() {
            return Err(EngineError::InvalidArgument(
                "run_id is empty; name the run (the id passed as run_id on Acquire)".into(),
            ));
        }
        self.validate_run_id(run_id)?;
        self.ensure_run(run_id, now)?;
        if let Some(run) = self.runs.get_mut(run_id) {
            run.budget = budget;
            run.last_seen = now.mono;
        }
        Ok(())
    }

    /// Every run, sorted by id.
    pub fn runs_status(&self, now: Now) -> Vec<RunStatus> {
        let mut v: Vec<RunStatus> = self
            .runs
            .iter()
            .map(|(id, r)| RunStatus {
                run_id: id.clone(),
                calls: r.calls,
                retries: r.retries,
                started_unix_ms: r.started_unix_ms,
                wall: now.mono.saturating_duration_since(r.started),
                budget: r.budget.clone(),
                exhausted: r.exhausted(id, now.mono),
            })
            .collect();
        v.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        v
    }

    /// Grants the first member of the route group that can serve within max_wait, skipping
    /// members in cooldown or with an open breaker; members kept for a condition are tried
    /// only when an earlier member met it.
    pub(super) fn acquire_group(
        &mut self,
        req: &AcquireRequest,
        need: Need,
        ctx: LeaseCtx,
        named_profile: bool,
        now: Now,
    ) -> Result<Acquired, EngineError> {
        let gi = self
            .config
            .route_groups
            .iter()
            .position(|g| g.name == req.route_group)
            .ok_or_else(|| {
                let known: Vec<&str> = self.config.route_groups.iter().map(|g| g.name.as_str()).collect();
                EngineError::InvalidArgument(format!(
                    "route group {:?} is not configured{}; add [route_groups.{:?}] or acquire a key",
                    req.route_group,
                    if known.is_empty() { String::new() } else { format!(" (configured: {})", known.join(", ")) },
                    req.route_group
                ))
            })?;
        let group = self.config.route_groups[gi].clone();
        let deadline = now.mono + req.max_wait;
        let mut seen: Vec<Condition> = Vec::new();
        let mut skipped: Vec<String> = Vec::new();
        let mut not_before: Option<i64> = None;
        let mut too_big: Option<EngineError> = None;
        for (mi, m) in group.members.iter().enumerate() {
            if !group.eligible(mi, &seen) {
                continue;
            }
            let id = self.resolve(&m.key)?;
            if let Err(e) = self.check_fits(id, need) {
                too_big.get_or_insert(e);
                continue;
            }
            if let Gate::Until(until) = self.gate(id, now.mono) {
                if until > deadline {
                    let unwell =
                        matches!(self.keys[id].breaker.gate(now.mono), BreakerGate::Open(_));
                    seen.push(if unwell {
                        Condition::Unavailable
                    } else {
                        Condition::RateLimited
                    });
                    skipped.push(format!(
                        "{} ({})",
                        m.key,
                        if unwell {
                            "breaker open"
                        } else {
                            "cooling down"
                        }
                    ));
                    let at = now.unix_of(until);
                    not_before = Some(not_before.map_or(at, |n| n.min(at)));
                    continue;
                }
            }
            self.keys[id].stats.requests_total += 1;
            let mut member_ctx = self.with_key_profile(ctx.clone(), id, named_profile);
            member_ctx.route = Some((gi, mi));
            match self.acquire_key(id, need, req.priority, req.max_wait, member_ctx, now)? {
                KeyAttempt::Granted(g) => return Ok(Acquired::Granted(g)),
                KeyAttempt::Queued(w) => return Ok(Acquired::Queued(w)),
                KeyAttempt::Late(r) => {
                    seen.push(Condition::RateLimited);
                    skipped.push(format!("{} (no capacity in time)", m.key));
                    if r.not_before_unix_ms > 0 {
                        not_before = Some(
                            not_before
                                .map_or(r.not_before_unix_ms, |n| n.min(r.not_before_unix_ms)),
                        );
                    }
                }
            }
        }
        if skipped.is_empty() {
            if let Some(e) = too_big {
                return Err(e);
            }
        }
        Ok(Acquired::NotGranted(Refusal {
            key: String::new(),
            not_before_unix_ms: not_before.unwrap_or(0),
            code: RefusalCode::RouteGroup,
            reason: format!(
                "no key of route group {:?} can serve within max_wait: {}",
                group.name,
                if skipped.is_empty() {
                    "none was eligible".to_string()
                } else {
                    skipped.join(", ")
                }
            ),
            waited: Duration::ZERO,
        }))
    }

    /// Feeds one answer to the key's breaker: 5xx, overloaded and timeouts count against it,
    /// successes for it; rate limits and bad requests say nothing about the key's health.
    pub(super) fn record_breaker(&mut self, id: usize, lease_no: u64, class: &Class, now: Now) {
        let failed = matches!(class, Class::Transient | Class::Overloaded);
        if !failed && *class != Class::Success {
            self.keys[id].breaker.drop_probe(lease_no);
            return;
        }
        let cfg = self.keys[id].breaker_config.clone();
        let Some(t) = self.keys[id]
            .breaker
            .record(&cfg, self.base, now.mono, failed, lease_no)
        else {
            return;
        };
        let name = self.keys[id].name.clone();
        let open = cfg.open_for.as_secs_f64();
        let message = match t {
            Transition::Opened => format!(
                "circuit breaker opened: failures reached {:.0} % of at least {} requests in {} s; closed to traffic for {open:.0} s",
                cfg.failure_rate * 100.0,
                cfg.min_requests,
                cfg.window.as_secs()
            ),
            Transition::Reopened => format!("probe failed: circuit breaker open again for {open:.0} s"),
            Transition::Closed => "probe succeeded: circuit breaker closed".to_string(),
        };
        self.event(now, &name, EventKind::Breaker, message);
        self.mark_dirty(id);
    }

    /// The advice for one answer: done, retry after a delay within the profile's attempts and
    /// deadline, fallback to the next suitable member of the lease's route group, or give up.
    pub(super) fn advise(
        &mut self,
        id: usize,
        lease: &Lease,
        class: &Class,
        outcome: &Outcome,
        now: Now,
    ) -> Advice {
        let advice = |action, retry_after, fallback_key: String, reason: String| Advice {
            action,
            retry_after,
            fallback_key,
            reason,
            condition: None,
        };
        let give_up =
            |reason: String| advice(Action::GiveUp, Duration::ZERO, String::new(), reason);
        let route = lease
            .ctx
            .route
            .and_then(|(g, m)| Some((self.config.route_groups.get(g)?.clone(), m)));
        let fallback = |cond: Condition| {
            let (group, m) = route.as_ref()?;
            group
                .fallback(*m, cond)
                .map(|i| group.members[i].key.clone())
        };
        if *class == Class::Success {
            return advice(Action::Done, Duration::ZERO, String::new(), String::new());
        }
        let key = self.keys[id].name.clone();
        let retryable = match class {
            Class::Success => {
                return advice(Action::Done, Duration::ZERO, String::new(), String::new())
            }
            Class::Unknown => {
                return give_up("the outcome is unknown (the caller left without a report)".into())
            }
            Class::Fatal(why) => {
                if is_context_length(outcome) {
                    if let Some(to) = fallback(Condition::ContextLength) {
                        let why =
                            format!("context length exceeded on {key}; {to} takes longer prompts");
                        let mut a = advice(Action::Fallback, Duration::ZERO, to, why);
                        a.condition = Some(Condition::ContextLength);
                        return a;
                    }
                }
                return give_up(why.clone());
            }
            c => c.clone(),
        };
        if outcome.stream_started {
            let t = if outcome.error_type.is_empty() {
                "error"
            } else {
                &outcome.error_type
            };
            return give_up(format!(
                "{t} after output was delivered; a retry would not be transparent"
            ));
        }
        if outcome.signals.should_retry == Some(false) {
            return give_up("the provider said x-should-retry: false".into());
        }
        let profile = self
            .config
            .profiles
            .get(lease.ctx.profile)
            .cloned()
            .unwrap_or_else(super::RetryProfile::batch);
        let attempt = outcome.attempt.max(1);
        let (condition, wait) = match retryable {
            Class::RateLimited | Class::Overloaded => {
                let until = self
                    .cooldowns_on(&key)
                    .map(|(_, c)| c.until)
                    .max()
                    .unwrap_or(now.mono);
                let cond = if retryable == Class::RateLimited {
                    Condition::RateLimited
                } else {
                    Condition::Unavailable
                };
                (cond, until.saturating_duration_since(now.mono))
            }
            _ => {
                let draw = self.next_random();
                let backoff = profile.delay(attempt, draw);
                (
                    Condition::Unavailable,
                    backoff.max(outcome.signals.retry_after.unwrap_or_default()),
                )
            }
        };
        let first = if outcome.first_attempt_unix_ms > 0 {
            outcome.first_attempt_unix_ms
        } else {
            lease.granted_unix_ms
        };
        let deadline_ms = first.saturating_add(profile.deadline.as_millis() as i64);
        let left = Duration::from_millis((deadline_ms - now.unix_ms).max(0) as u64);
        let run_spent = self
            .runs
            .get(&lease.ctx.run_id)
            .filter(|r| r.budget.max_retries.is_some_and(|m| r.retries >= m))
            .map(|r| {
                format!(
                    "run_budget: run {:?} already retried {} times, its max_retries",
                    lease.ctx.run_id, r.retries
                )
            });
        if let Some(why) = run_spent {
            return give_up(why);
        }
        let spent = if let Some((_, quota)) = self.daily_on(id, now.mono) {
            Some(format!(
                "the daily quota ({quota}) on {key} is spent until it resets; retrying today will not help"
            ))
        } else if attempt >= profile.attempts {
            Some(format!(
                "attempt {attempt} of {} ({} profile) failed on {key}",
                profile.attempts, profile.name
            ))
        } else if wait > left {
            Some(format!(
                "the next try in {:.1} s would be past the {} profile's {:.0} s deadline",
                wait.as_secs_f64(),
                profile.name,
                profile.deadline.as_secs_f64()
            ))
        } else if matches!(self.keys[id].breaker.gate(now.mono), BreakerGate::Open(_)) {
            Some(format!("circuit breaker open on {key}"))
        } else {
            None
        };
        match spent {
            None => {
                let why = match retryable {
                    Class::RateLimited | Class::Overloaded => {
                        format!("key {key:?} is cooling down; acquire again")
                    }
                    _ => format!(
                        "transient failure (status {}); retry after the backoff",
                        outcome.status
                    ),
                };
                advice(Action::Retry, wait, String::new(), why)
            }
            Some(why) => match fallback(condition) {
                Some(to) => {
                    let why = format!("{why} ({})", condition.as_str());
                    let mut a = advice(Action::Fallback, Duration::ZERO, to, why);
                    a.condition = Some(condition);
                    a
                }
                None => give_up(why),
            },
        }
    }

    /// A run's calls and retries, for tests.
    #[cfg(test)]
    pub(super) fn run_calls(&self, run_id: &str) -> Option<(u64, u64)> {
        self.runs.get(run_id).map(|r| (r.calls, r.retries))
    }
}
