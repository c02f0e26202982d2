//! Run budgets: an agent turns one action into many calls; a run_id bounds them.

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
