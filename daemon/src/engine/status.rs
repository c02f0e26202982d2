//! What status shows: each key's buckets with their sources, queue, 429s, tokens, cooldown.

use super::*;

/// What status shows of one bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct BucketStatus {
    /// What is enforced now; `capacity` as it is while a ramp-up lasts.
    pub bucket: BucketLevel,
    pub capacity_source: LimitSource,
    pub configured_limit: Option<f64>,
    pub configured_capacity: Option<f64>,
    /// The lower of what the headers say and what probing found, with where it came from.
    pub learned_limit: Option<f64>,
    pub learned_capacity: Option<f64>,
    pub learned_source: Option<LimitSource>,
    /// What the provider's headers name, whatever is enforced.
    pub headers_limit: Option<f64>,
    /// Probing found a limit beneath the headers': refusals they did not predict came from
    /// something in between (a gateway, nginx).
    pub beneath_headers: bool,
}

impl BucketStatus {
    fn of(b: &Bucket, now: Instant) -> BucketStatus {
        let learned = b.learned_limit();
        BucketStatus {
            bucket: b.level_of(b.capacity_now(now)),
            capacity_source: b.capacity_source(),
            configured_limit: b.configured_rate().map(|c| c.limit),
            configured_capacity: b.configured_rate().map(|c| c.capacity),
            learned_limit: learned.map(|l| l.0),
            learned_capacity: learned.and_then(|l| l.1),
            learned_source: learned.map(|l| l.2),
            headers_limit: b.headers_limit(),
            beneath_headers: b.probed_beneath_headers(),
        }
    }
}

/// What status shows of one key.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyStatus {
    pub key: String,
    pub ancestors: Vec<String>,
    pub buckets: Vec<BucketStatus>,
    pub in_flight: u64,
    pub max_concurrency: u64,
    pub queue_depth: u64,
    pub queue_wait_p50_ms: u64,
    pub queue_wait_p95_ms: u64,
    pub rate_limited_total: u64,
    pub rate_limited_per_minute: f64,
    pub tokens_reserved: u64,
    pub tokens_used: u64,
    pub tokens_outstanding: u64,
    pub cooldown_remaining: Duration,
    pub cooldown_reason: String,
    pub fallbacks_total: u64,
    pub fallbacks_per_minute: f64,
    pub retries_total: u64,
    pub give_ups_total: u64,
    /// closed, open or half_open
    pub breaker: super::breaker::BreakerState,
    pub breaker_open_remaining: Duration,
    pub requests_total: u64,
    pub granted_total: u64,
    pub rejected_total: u64,
    /// Requests abandoned by their callers, and the ledger of leases (`KeyStats`).
    pub cancelled_total: u64,
    pub settled_total: u64,
    pub withdrawn_total: u64,
    pub expired_total: u64,
    pub requests_per_second: f64,
    pub last_headers: std::sync::Arc<BTreeMap<String, String>>,
    pub provider: Option<Provider>,
    pub output_counted_as: OutputCounting,
    pub output_counted_as_source: AccountingSource,
    pub headers_ignored_total: u64,
    /// In a fleet, the part of its limits this limiter holds (None: the whole).
    pub fleet: Option<super::FleetPart>,
    /// What a request that declares no output reserves now (None before any answer).
    pub output_tokens_estimate: Option<u64>,
    /// Of tokens reserved and used: those of requests that declared no output and reserved
    /// the learned estimate (the caller's default, before any answer, is left out).
    pub undeclared_tokens_reserved: u64,
    pub undeclared_tokens_used: u64,
    /// Answers served (2xx) but reported without their usage: settled at the estimate.
    pub settled_at_estimate_total: u64,
    /// Where max_concurrency comes from (None: unlimited), and what refusals taught.
    pub concurrency_source: Option<LimitSource>,
    pub learned_concurrency: Option<u64>,
    /// A daily quota the provider said is spent: when it resets (Unix ms) and which it is.
    pub daily_quota: Option<(i64, String)>,
    /// The window of a requests bucket that follows a provider's fixed windows.
    pub fixed_window: Option<Duration>,
    /// The plan's windows (5-hour, 7-day) as the key's answers told them.
    pub plan_windows: Vec<super::windows::WindowStatus>,
}

impl Engine {
    /// Waiters by key and priority.
    pub fn queue_depths(&self) -> Vec<(String, i32, u64)> {
        let mut m: BTreeMap<(KeyId, i32), u64> = BTreeMap::new();
        for ((Reverse(p), _), w) in &self.queue {
            *m.entry((w.key, *p)).or_insert(0) += 1;
        }
        m.into_iter()
            .map(|((k, p), n)| (self.keys[k].name.clone(), p, n))
            .collect()
    }

    /// Status of every key, sorted by name.
    pub fn status(&mut self, now: Now) -> Vec<KeyStatus> {
        let mut out = self.status_of(0..self.keys.len(), now);
        out.sort_by(|a, b| a.key.cmp(&b.key));
        out
    }

    /// How many keys there are (a status may be built a range of them at a time).
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// Status of the keys in `ids` (in table order), so that a status of many keys can be built
    /// a part at a time without holding up everything else.
    pub fn status_of(&mut self, ids: std::ops::Range<usize>, now: Now) -> Vec<KeyStatus> {
        let ids = ids.start.min(self.keys.len())..ids.end.min(self.keys.len());
        let mut depth = vec![0u64; ids.len()];
        for w in self.queue.values() {
            if ids.contains(&w.key.at()) {
                depth[w.key.at() - ids.start] += 1;
            }
        }
        let base = self.base;
        let mut out = Vec::with_capacity(ids.len());
        let in_range = self.key_ids().skip(ids.start).take(ids.len());
        for (id, &queue_depth) in in_range.zip(depth.iter()) {
            let daily_quota = self
                .cooldowns_on(&self.keys[id].name)
                .filter(|(_, c)| now.mono < c.until)
                .find_map(|(_, c)| c.daily.clone().map(|d| (now.unix_of(c.until), d)));
            let (cooldown_until, cooldown_reason) = {
                self.cooldowns_on(&self.keys[id].name)
                    .filter(|(_, c)| now.mono < c.until)
                    .map(|(_, c)| (c.until, c.reason.clone()))
                    .max_by_key(|(u, _)| *u)
                    .unwrap_or((now.mono, String::new()))
            };
            let ancestors_names = self.keys[id].scope[1..]
                .iter()
                .map(|&a| self.keys[a].name.clone())
                .collect();
            let plan_windows = self.windows_status(id, now);
            let key = &mut self.keys[id];
            for b in &mut key.buckets {
                b.refill(now.mono);
            }
            let concurrency = key.effective_concurrency();
            let rl_minute = key.stats.rate_limited.sum_last(base, now.mono, 60);
            let granted_10s = key.stats.granted.sum_last(base, now.mono, 10);
            let fallbacks_minute = key.stats.fallbacks.sum_last(base, now.mono, 60);
            out.push(KeyStatus {
                key: key.name.clone(),
                ancestors: ancestors_names,
                buckets: key
                    .buckets
                    .iter()
                    .filter(|b| b.is_limited())
                    .map(|b| BucketStatus::of(b, now.mono))
                    .collect(),
                in_flight: key.in_flight,
                max_concurrency: concurrency.map_or(0, |(m, _)| m),
                queue_depth,
                queue_wait_p50_ms: key.stats.waits.percentile(50.0),
                queue_wait_p95_ms: key.stats.waits.percentile(95.0),
                rate_limited_total: key.stats.rate_limited_total,
                rate_limited_per_minute: rl_minute as f64,
                tokens_reserved: key.stats.tokens_reserved,
                tokens_used: key.stats.tokens_used,
                tokens_outstanding: key.stats.tokens_outstanding,
                cooldown_remaining: cooldown_until.saturating_duration_since(now.mono),
                cooldown_reason,
                fallbacks_total: key.stats.fallbacks_total,
                fallbacks_per_minute: fallbacks_minute as f64,
                retries_total: key.stats.retries_total,
                give_ups_total: key.stats.give_ups_total,
                breaker: key.breaker.state(now.mono),
                breaker_open_remaining: key
                    .breaker
                    .open_until()
                    .map_or(Duration::ZERO, |u| u.saturating_duration_since(now.mono)),
                requests_total: key.stats.requests_total,
                granted_total: key.stats.granted_total,
                rejected_total: key.stats.rejected_total,
                cancelled_total: key.stats.cancelled_total,
                settled_total: key.stats.settled_total,
                withdrawn_total: key.stats.withdrawn_total,
                expired_total: key.stats.expired_total,
                requests_per_second: granted_10s as f64 / 10.0,
                last_headers: key.last_headers.clone(),
                provider: key.provider,
                output_counted_as: key.output_counted_as,
                output_counted_as_source: key.output_source,
                headers_ignored_total: key.stats.headers_ignored_total,
                fleet: key.fleet,
                output_tokens_estimate: key.output.estimate(),
                undeclared_tokens_reserved: key.stats.undeclared_reserved,
                undeclared_tokens_used: key.stats.undeclared_used,
                settled_at_estimate_total: key.stats.settled_at_estimate_total,
                concurrency_source: concurrency.map(|(_, s)| s),
                learned_concurrency: key.concurrency.as_ref().map(|c| c.limit),
                daily_quota,
                fixed_window: key
                    .find_minute_bucket(Dimension::Requests)
                    .and_then(|i| key.buckets[i].window().map(|w| w.length)),
                plan_windows,
            });
        }
        out
    }
}
