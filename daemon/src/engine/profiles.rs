//! Retry profiles: how many attempts, within what total deadline, with which backoff.

use super::{Engine, EngineError, KeyLimits};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backoff {
    /// Uniform in [0, min(cap, base * 2^(n-1))].
    Full,
    /// Half of that, plus uniform in the other half.
    Equal,
    /// Uniform in [base, min(cap, base * 3^n)], capped.
    Decorrelated,
}

impl Backoff {
    pub fn parse(s: &str) -> Option<Backoff> {
        match s {
            "full" => Some(Backoff::Full),
            "equal" => Some(Backoff::Equal),
            "decorrelated" => Some(Backoff::Decorrelated),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct RetryProfile {
    pub name: String,
    pub attempts: u32,
    /// Total time from the first attempt after which no retry is advised.
    pub deadline: Duration,
    pub backoff: Backoff,
    pub base: Duration,
    pub cap: Duration,
}

impl RetryProfile {
    /// A person is waiting: few attempts, a short deadline.
    pub fn interactive() -> RetryProfile {
        RetryProfile {
            name: "interactive".into(),
            attempts: 3,
            deadline: Duration::from_secs(8),
            backoff: Backoff::Full,
            base: Duration::from_millis(250),
            cap: Duration::from_secs(2),
        }
    }

    /// Nobody is waiting: more attempts, minutes of deadline.
    pub fn batch() -> RetryProfile {
        RetryProfile {
            name: "batch".into(),
            attempts: 8,
            deadline: Duration::from_secs(300),
            backoff: Backoff::Full,
            base: Duration::from_secs(1),
            cap: Duration::from_secs(60),
        }
    }

    /// The range the delay after failed attempt `n` (1-based) is drawn from.
    pub fn bounds(&self, n: u32) -> (Duration, Duration) {
        let n = n.max(1);
        let grow = |factor: u32, exp: u32| {
            let mult = f64::from(factor).powi(exp.min(30) as i32);
            Duration::from_secs_f64((self.base.as_secs_f64() * mult).min(self.cap.as_secs_f64()))
        };
        match self.backoff {
            Backoff::Full => (Duration::ZERO, grow(2, n - 1)),
            Backoff::Equal => {
                let c = grow(2, n - 1);
                (c / 2, c)
            }
            Backoff::Decorrelated => (self.base.min(self.cap), grow(3, n)),
        }
    }

    /// The delay after failed attempt `n`, for a uniform draw in [0, 1).
    pub fn delay(&self, n: u32, draw: f64) -> Duration {
        let (lo, hi) = self.bounds(n);
        lo + (hi - lo).mul_f64(draw.clamp(0.0, 1.0))
    }
}

// The engine's profiles, and the policy checked whole: profiles, route groups, key profiles.

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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(backoff: Backoff) -> RetryProfile {
        RetryProfile {
            name: "t".into(),
            attempts: 10,
            deadline: Duration::from_secs(100),
            backoff,
            base: Duration::from_millis(100),
            cap: Duration::from_secs(2),
        }
    }

    #[test]
    fn each_backoff_stays_in_its_bounds() {
        for kind in [Backoff::Full, Backoff::Equal, Backoff::Decorrelated] {
            let p = profile(kind);
            for n in 1..=10 {
                let (lo, hi) = p.bounds(n);
                assert!(
                    lo <= hi && hi <= p.cap,
                    "{kind:?} attempt {n}: {lo:?}..{hi:?}"
                );
                for draw in [0.0, 0.3, 0.999] {
                    let d = p.delay(n, draw);
                    assert!(d >= lo && d <= hi, "{kind:?} {n} {draw}: {d:?}");
                }
            }
        }
        let full = profile(Backoff::Full);
        assert_eq!(full.bounds(1), (Duration::ZERO, Duration::from_millis(100)));
        assert_eq!(full.bounds(3), (Duration::ZERO, Duration::from_millis(400)));
        assert_eq!(full.bounds(9).1, Duration::from_secs(2));
        let equal = profile(Backoff::Equal);
        assert_eq!(
            equal.bounds(2),
            (Duration::from_millis(100), Duration::from_millis(200))
        );
        let dec = profile(Backoff::Decorrelated);
        assert_eq!(
            dec.bounds(1),
            (Duration::from_millis(100), Duration::from_millis(300))
        );
        assert_eq!(dec.bounds(2).1, Duration::from_millis(900));
    }

    #[test]
    fn built_in_profiles() {
        let i = RetryProfile::interactive();
        assert_eq!((i.attempts, i.deadline), (3, Duration::from_secs(8)));
        let b = RetryProfile::batch();
        assert_eq!((b.attempts, b.deadline), (8, Duration::from_secs(300)));
        assert_eq!(Backoff::parse("decorrelated"), Some(Backoff::Decorrelated));
        assert_eq!(Backoff::parse("linear"), None);
    }
}
