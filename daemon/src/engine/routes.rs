//! Route groups: an ordered list of keys that can serve the same request, each optionally
//! kept for a condition.

use super::breaker::BreakerGate;
use super::{
    AcquireRequest, Acquired, Engine, EngineError, Gate, KeyAttempt, LeaseCtx, Need, Now, Refusal,
    RefusalCode,
};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    /// The request is too long for the key's model.
    ContextLength,
    /// The key is in cooldown or cannot serve in time.
    RateLimited,
    /// The key keeps failing (5xx, overloaded, timeouts) or its breaker is open.
    Unavailable,
}

impl Condition {
    pub fn parse(s: &str) -> Option<Condition> {
        match s {
            "context_length" => Some(Condition::ContextLength),
            "rate_limited" => Some(Condition::RateLimited),
            "unavailable" => Some(Condition::Unavailable),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Condition::ContextLength => "context_length",
            Condition::RateLimited => "rate_limited",
            Condition::Unavailable => "unavailable",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct RouteMember {
    pub key: String,
    /// Empty: serves any request. Else only when an earlier member has one of these.
    pub when: Vec<Condition>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RouteGroup {
    pub name: String,
    pub members: Vec<RouteMember>,
}

impl RouteGroup {
    /// Whether member `i` may be tried for a plain acquire, given the conditions met by the
    /// members before it.
    pub fn eligible(&self, i: usize, seen: &[Condition]) -> bool {
        let m = &self.members[i];
        m.when.is_empty()
            || m.when
                .iter()
                .any(|c| *c != Condition::ContextLength && seen.contains(c))
    }

    /// The member to fall back to from member `from` for `condition`.
    pub fn fallback(&self, from: usize, condition: Condition) -> Option<usize> {
        match condition {
            Condition::ContextLength => (0..self.members.len())
                .find(|&i| i != from && self.members[i].when.contains(&Condition::ContextLength)),
            c => (from + 1..self.members.len()).find(|&i| {
                let w = &self.members[i].when;
                w.is_empty() || w.contains(&c)
            }),
        }
    }
}

// The engine's route groups: an Acquire served by the first member that can.

impl Engine {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group() -> RouteGroup {
        let m = |key: &str, when: &[Condition]| RouteMember {
            key: key.into(),
            when: when.to_vec(),
        };
        RouteGroup {
            name: "chat".into(),
            members: vec![
                m("primary", &[]),
                m("long", &[Condition::ContextLength]),
                m("spare", &[Condition::RateLimited]),
                m("other", &[]),
            ],
        }
    }

    #[test]
    fn fallback_picks_the_next_suitable_member() {
        let g = group();
        assert_eq!(g.fallback(0, Condition::RateLimited), Some(2));
        assert_eq!(g.fallback(0, Condition::Unavailable), Some(3));
        assert_eq!(g.fallback(0, Condition::ContextLength), Some(1));
        assert_eq!(g.fallback(2, Condition::RateLimited), Some(3));
        assert_eq!(g.fallback(3, Condition::Unavailable), None);
        assert_eq!(g.fallback(1, Condition::ContextLength), None);
    }

    #[test]
    fn conditional_members_are_tried_only_when_their_condition_was_met() {
        let g = group();
        assert!(g.eligible(0, &[]));
        assert!(
            !g.eligible(1, &[Condition::RateLimited]),
            "context_length members are for fallback advice only"
        );
        assert!(!g.eligible(2, &[]));
        assert!(g.eligible(2, &[Condition::RateLimited]));
        assert!(!g.eligible(2, &[Condition::Unavailable]));
        assert_eq!(
            Condition::parse("unavailable"),
            Some(Condition::Unavailable)
        );
        assert_eq!(Condition::parse("down"), None);
    }
}
