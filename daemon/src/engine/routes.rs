//! Route groups: an ordered list of keys that can serve the same request, each optionally
//! kept for a condition.

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
