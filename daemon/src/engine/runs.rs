//! Run budgets: an agent turns one action into many calls; a run_id bounds them.

use super::{AcquireRequest, Engine, EngineError, Now, Refusal, RefusalCode, MAX_KEY_BYTES};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunBudget {
    pub max_calls: Option<u64>,
    pub max_retries: Option<u64>,
    pub max_wall_time: Option<Duration>,
}

impl RunBudget {
    pub fn is_unlimited(&self) -> bool {
        self.max_calls.is_none() && self.max_retries.is_none() && self.max_wall_time.is_none()
    }
}

#[derive(Clone, Debug)]
pub struct Run {
    pub started: Instant,
    pub started_unix_ms: i64,
    pub calls: u64,
    pub retries: u64,
    pub budget: RunBudget,
    pub last_seen: Instant,
}

impl Run {
    pub fn new(budget: RunBudget, now: Instant, unix_ms: i64) -> Run {
        Run {
            started: now,
            started_unix_ms: unix_ms,
            calls: 0,
            retries: 0,
            budget,
            last_seen: now,
        }
    }

    /// Why the run may not make another call, if it may not.
    pub fn exhausted(&self, run_id: &str, now: Instant) -> Option<String> {
        let b = &self.budget;
        if let Some(max) = b.max_calls.filter(|m| self.calls >= *m) {
            return Some(format!(
                "run_budget: run {run_id:?} made {} calls, its max_calls is {max}",
                self.calls
            ));
        }
        if let Some(max) = b.max_retries.filter(|m| self.retries > *m) {
            return Some(format!(
                "run_budget: run {run_id:?} retried {} times, its max_retries is {max}",
                self.retries
            ));
        }
        let wall = now.saturating_duration_since(self.started);
        if let Some(max) = b.max_wall_time.filter(|m| wall > *m) {
            return Some(format!(
                "run_budget: run {run_id:?} has run {:.1} s, its max_wall_time is {:.1} s",
                wall.as_secs_f64(),
                max.as_secs_f64()
            ));
        }
        None
    }
}

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

// The engine's runs: made on their first call, refused past their budget.

impl Engine {
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

    /// A run's calls and retries, for tests.
    #[cfg(test)]
    pub(super) fn run_calls(&self, run_id: &str) -> Option<(u64, u64)> {
        self.runs.get(run_id).map(|r| (r.calls, r.retries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_budget_bounds_the_run() {
        let t = Instant::now();
        let mut r = Run::new(
            RunBudget {
                max_calls: Some(2),
                ..RunBudget::default()
            },
            t,
            0,
        );
        assert_eq!(r.exhausted("a", t), None);
        r.calls = 2;
        assert!(r
            .exhausted("a", t)
            .is_some_and(|m| m.starts_with("run_budget") && m.contains("max_calls is 2")));
        let mut r = Run::new(
            RunBudget {
                max_retries: Some(1),
                ..RunBudget::default()
            },
            t,
            0,
        );
        r.retries = 1;
        assert_eq!(r.exhausted("a", t), None);
        r.retries = 2;
        assert!(r
            .exhausted("a", t)
            .is_some_and(|m| m.contains("max_retries")));
        let r = Run::new(
            RunBudget {
                max_wall_time: Some(Duration::from_secs(5)),
                ..RunBudget::default()
            },
            t,
            0,
        );
        assert_eq!(r.exhausted("a", t + Duration::from_secs(5)), None);
        assert!(r
            .exhausted("a", t + Duration::from_secs(6))
            .is_some_and(|m| m.contains("max_wall_time")));
        assert!(RunBudget::default().is_unlimited());
    }
}
