//! Limiting while the daemon cannot be asked (`conformance/fail_static.json`, the same rules as
//! the Python and Node clients). A daemon that answered before and went away is taken as
//! restarting: for [`RESTART_WAIT`] requests wait for it. Then, until `fail_static_for`, each key
//! is limited with what the proxy last knew of it: the rate of its grants in the [`WINDOW`]
//! before the outage (the smaller of their count over their span and one over the median time
//! between two: a burst granted at once is not the rate), a second of it as a burst, and the
//! most of its leases in flight at once. Then requests fail open. A key it knows nothing of is
//! not limited. Pure: times are passed in.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const RESTART_WAIT: Duration = Duration::from_secs(5);
pub const FAIL_STATIC_FOR: Duration = Duration::from_secs(60);
pub const WINDOW: Duration = Duration::from_secs(10);
const MAX_GRANTS: usize = 4096;
const MAX_KEYS: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The daemon answers.
    Up,
    /// It went away moments ago: wait for it.
    Wait,
    /// Limit each key with what was known of it.
    Static,
    /// Unlimited.
    Open,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Up => "up",
            Phase::Wait => "wait",
            Phase::Static => "static",
            Phase::Open => "open",
        }
    }
}

/// The phase of an outage that has lasted `outage`.
pub fn phase(outage: Duration, answered: bool, fail_static_for: Duration) -> Phase {
    if !answered {
        Phase::Open
    } else if outage < RESTART_WAIT {
        Phase::Wait
    } else if outage < fail_static_for {
        Phase::Static
    } else {
        Phase::Open
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StaticLimits {
    pub rate_per_s: f64,
    pub burst: u32,
    pub concurrency: u32,
}

/// The limits from grants `grants_ago` before the outage; None when none was in the window.
pub fn static_limits(grants_ago: &[Duration], in_flight_max: u32) -> Option<StaticLimits> {
    let mut ago: Vec<f64> = grants_ago
        .iter()
        .filter(|g| **g <= WINDOW)
        .map(Duration::as_secs_f64)
        .collect();
    if ago.is_empty() {
        return None;
    }
    ago.sort_by(f64::total_cmp);
    let last = ago[ago.len() - 1];
    let span = last.clamp(1.0, WINDOW.as_secs_f64());
    let mut rate = ago.len() as f64 / span;
    let mut gaps: Vec<f64> = ago.windows(2).map(|w| w[1] - w[0]).collect();
    if !gaps.is_empty() {
        gaps.sort_by(f64::total_cmp);
        let mid = gaps.len() / 2;
        let median = if gaps.len() % 2 == 1 {
            gaps[mid]
        } else {
            (gaps[mid - 1] + gaps[mid]) / 2.0
        };
        if median > 0.0 {
            rate = rate.min(1.0 / median);
        }
    }
    Some(StaticLimits {
        rate_per_s: rate,
        burst: (rate.floor() as u32).max(1),
        concurrency: in_flight_max.max(1),
    })
}

struct Bucket {
    start: Instant,
    limits: StaticLimits,
    level: f64,
    last: Instant,
}

#[derive(Default)]
struct KeyMemory {
    grants: VecDeque<Instant>,
    peaks: VecDeque<(Instant, u32)>,
    in_flight: u32,
    bucket: Option<Bucket>,
}

impl KeyMemory {
    fn limits(&self, outage_start: Instant) -> Option<StaticLimits> {
        let within = |t: Instant| outage_start >= t && outage_start - t <= WINDOW;
        let peak = self
            .peaks
            .iter()
            .filter(|(t, _)| within(*t))
            .map(|(_, n)| *n)
            .max()
            .unwrap_or(0);
        let ago: Vec<Duration> = self
            .grants
            .iter()
            .filter(|t| outage_start >= **t)
            .map(|t| outage_start - *t)
            .collect();
        static_limits(&ago, peak)
    }
}

/// What the proxy knows of each key, and the static phase's local buckets.
#[derive(Default)]
pub struct FailStatic {
    keys: Mutex<HashMap<String, KeyMemory>>,
}

/// What the static phase says of a request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Turn {
    /// Not limited: nothing is known of the key.
    Unknown,
    /// It may go now (counted in flight until released).
    Go,
    /// Ask again after this long.
    Wait(Duration),
}

impl FailStatic {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, KeyMemory>> {
        self.keys.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A lease on `key` began: granted by the daemon (`by_daemon`), or by the static phase.
    pub fn granted(&self, key: &str, now: Instant, by_daemon: bool) {
        let mut keys = self.lock();
        if !keys.contains_key(key) && keys.len() >= MAX_KEYS {
            // The key granted longest ago with nothing in flight (a guard will release it).
            let oldest = keys
                .iter()
                .filter(|(_, k)| k.in_flight == 0)
                .min_by_key(|(_, k)| k.grants.back().copied())
                .map(|(n, _)| n.clone());
            if let Some(o) = oldest {
                keys.remove(&o);
            }
        }
        let k = keys.entry(key.to_string()).or_default();
        k.in_flight += 1;
        if by_daemon {
            if k.grants.len() >= MAX_GRANTS {
                k.grants.pop_front();
                k.peaks.pop_front();
            }
            k.grants.push_back(now);
            k.peaks.push_back((now, k.in_flight));
        }
    }

    /// A lease on `key` ended.
    pub fn released(&self, key: &str) {
        if let Some(k) = self.lock().get_mut(key) {
            k.in_flight = k.in_flight.saturating_sub(1);
        }
    }

    /// In the static phase of the outage that began at `outage_start`: may a request on `key`
    /// go now?
    pub fn take(&self, key: &str, outage_start: Instant, now: Instant) -> Turn {
        let mut keys = self.lock();
        let Some(k) = keys.get_mut(key) else {
            return Turn::Unknown;
        };
        if k.bucket.as_ref().is_none_or(|b| b.start != outage_start) {
            let Some(limits) = k.limits(outage_start) else {
                return Turn::Unknown;
            };
            k.bucket = Some(Bucket {
                start: outage_start,
                limits,
                level: f64::from(limits.burst),
                last: now,
            });
        }
        let in_flight = k.in_flight;
        let Some(b) = k.bucket.as_mut() else {
            return Turn::Unknown;
        };
        let elapsed = now.saturating_duration_since(b.last).as_secs_f64();
        b.level = (b.level + elapsed * b.limits.rate_per_s).min(f64::from(b.limits.burst));
        b.last = now;
        if in_flight >= b.limits.concurrency {
            return Turn::Wait(Duration::from_millis(50));
        }
        if b.level >= 1.0 {
            b.level -= 1.0;
            k.in_flight += 1;
            return Turn::Go;
        }
        Turn::Wait(Duration::from_secs_f64(
            (1.0 - b.level) / b.limits.rate_per_s,
        ))
    }
}
