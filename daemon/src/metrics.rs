//! Prometheus metrics, served as text on an opt-in loopback address. Counters move as calls
//! happen; gauges (queue depth, cooldowns) are read from the engine at each scrape.

use crate::engine::{Action, Advice, Grant, KeyStatus, Period, ReportInfo};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KeyLabel {
    key: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KeyStatusLabel {
    key: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KeyKindLabel {
    key: String,
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KeyErrorLabel {
    key: String,
    error_type: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KeyPriorityLabel {
    key: String,
    priority: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KeyLimitLabel {
    key: String,
    limit_type: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabel {
    key: String,
    dimension: String,
    source: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KeyDimensionLabel {
    key: String,
    dimension: String,
}

/// What the fleet gauges show at a scrape.
#[derive(Clone, Copy, Debug)]
pub struct FleetGauges {
    pub connected: bool,
    pub hosts: u64,
    pub slice: std::time::Duration,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FallbackLabel {
    from: String,
    to: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabel {
    operation: String,
}

fn wait_histogram() -> Histogram {
    // 1 ms to about 65 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

pub struct Metrics {
    registry: Registry,
    requests: Family<KeyStatusLabel, Counter>,
    tokens_reserved: Family<KeyLabel, Counter>,
    tokens_used: Family<KeyKindLabel, Counter>,
    retries: Family<KeyErrorLabel, Counter>,
    queue_depth: Family<KeyPriorityLabel, Gauge>,
    queue_wait: Family<KeyLabel, Histogram, fn() -> Histogram>,
    rate_limit_hits: Family<KeyLimitLabel, Counter>,
    fallbacks: Family<FallbackLabel, Counter>,
    duplicates: Counter,
    cooldown_active: Family<KeyLabel, Gauge>,
    limit_effective: Family<LimitLabel, Gauge<f64, AtomicU64>>,
    store_failures: Family<OperationLabel, Counter>,
    store_healthy: Gauge,
    fleet_connected: Gauge,
    fleet_hosts: Gauge,
    fleet_slice: Family<KeyDimensionLabel, Gauge<f64, AtomicU64>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let m = Metrics {
            requests: Family::default(),
            tokens_reserved: Family::default(),
            tokens_used: Family::default(),
            retries: Family::default(),
            queue_depth: Family::default(),
            queue_wait: Family::new_with_constructor(wait_histogram as fn() -> Histogram),
            rate_limit_hits: Family::default(),
            fallbacks: Family::default(),
            duplicates: Counter::default(),
            cooldown_active: Family::default(),
            limit_effective: Family::default(),
            store_failures: Family::default(),
            store_healthy: Gauge::default(),
            fleet_connected: Gauge::default(),
            fleet_hosts: Gauge::default(),
            fleet_slice: Family::default(),
            registry: Registry::default(),
        };
        // The text encoder adds `_total` to counters.
        registry.register(
            "llm_requests",
            "Provider answers reported, by key and HTTP status (0: none came)",
            m.requests.clone(),
        );
        registry.register(
            "llm_tokens_reserved",
            "Tokens reserved by granted leases",
            m.tokens_reserved.clone(),
        );
        registry.register(
            "llm_tokens_used",
            "Tokens used as reported, by kind (input, cached_input, output)",
            m.tokens_used.clone(),
        );
        registry.register(
            "llm_retries",
            "Retries advised, by the failure's error type",
            m.retries.clone(),
        );
        registry.register(
            "llm_queue_depth",
            "Callers waiting in the daemon, by priority",
            m.queue_depth.clone(),
        );
        registry.register(
            "llm_queue_wait_seconds",
            "Time from Acquire to grant",
            m.queue_wait.clone(),
        );
        registry.register(
            "llm_rate_limit_hits",
            "Provider 429s by the limit they name, and acquires not granted in time (llmctl_wait)",
            m.rate_limit_hits.clone(),
        );
        registry.register(
            "llm_fallbacks",
            "Fallbacks advised, by from key, to key and reason",
            m.fallbacks.clone(),
        );
        registry.register(
            "llm_duplicate_suppressed",
            "Claims answered PENDING or DONE: work not done twice",
            m.duplicates.clone(),
        );
        registry.register(
            "llm_cooldown_active",
            "1 while the key is cooling down",
            m.cooldown_active.clone(),
        );
        registry.register(
            "llm_limit_effective",
            "The effective per-minute limit of each bucket, and the requests allowed in flight (dimension concurrency), by where it came from (config, headers, aimd)",
            m.limit_effective.clone(),
        );
        registry.register(
            "llm_store_write_failures",
            "Writes to the state store that failed or did not finish in time, by operation",
            m.store_failures.clone(),
        );
        registry.register(
            "llm_store_healthy",
            "1 while the state store's last write succeeded in time, 0 while writes fail",
            m.store_healthy.clone(),
        );
        m.store_healthy.set(1);
        Metrics { registry, ..m }
    }

    pub fn granted(&self, g: &Grant) {
        let key = KeyLabel { key: g.key.clone() };
        self.tokens_reserved
            .get_or_create(&key)
            .inc_by(g.reserved_tokens);
        self.queue_wait
            .get_or_create(&key)
            .observe(g.waited.as_secs_f64());
    }

    pub fn not_granted(&self, key: &str) {
        let label = KeyLimitLabel {
            key: key.to_string(),
            limit_type: "llmctl_wait".into(),
        };
        self.rate_limit_hits.get_or_create(&label).inc();
    }

    pub fn reported(&self, info: &ReportInfo, advice: &Advice) {
        let key = info.key.clone();
        self.requests
            .get_or_create(&KeyStatusLabel {
                key: key.clone(),
                status: info.status.to_string(),
            })
            .inc();
        for (kind, n) in [
            (
                "input",
                info.input_tokens.saturating_sub(info.cached_input_tokens),
            ),
            ("cached_input", info.cached_input_tokens),
            ("output", info.output_tokens),
        ] {
            if n > 0 {
                self.tokens_used
                    .get_or_create(&KeyKindLabel {
                        key: key.clone(),
                        kind: kind.into(),
                    })
                    .inc_by(n);
            }
        }
        if let Some(limit_type) = &info.limit_type {
            self.rate_limit_hits
                .get_or_create(&KeyLimitLabel {
                    key: key.clone(),
                    limit_type: limit_type.clone(),
                })
                .inc();
        }
        match advice.action {
            Action::Retry => {
                let error_type = match (info.error_type.as_str(), info.status) {
                    ("", 0) => "no_answer".to_string(),
                    ("", s) => format!("status_{s}"),
                    (t, _) => t.to_string(),
                };
                self.retries
                    .get_or_create(&KeyErrorLabel { key, error_type })
                    .inc();
            }
            Action::Fallback => {
                let label = FallbackLabel {
                    from: key,
                    to: advice.fallback_key.clone(),
                    reason: advice.condition.map_or("", |c| c.as_str()).to_string(),
                };
                self.fallbacks.get_or_create(&label).inc();
            }
            Action::Done | Action::GiveUp => {}
        }
    }

    /// A store operation failed (`failed`) or succeeded.
    pub fn store_write(&self, operation: &str, failed: bool) {
        if failed {
            self.store_failures
                .get_or_create(&OperationLabel {
                    operation: operation.into(),
                })
                .inc();
        }
        self.store_healthy.set(i64::from(!failed));
    }

    pub fn duplicate_suppressed(&self) {
        self.duplicates.inc();
    }

    /// Encodes everything, after reading the gauges from the engine's current state.
    /// Fleet mode: the fleet's gauges are shown too.
    pub fn with_fleet(mut self) -> Metrics {
        self.registry.register(
            "llm_fleet_connected",
            "1 while the fleet's Redis answers, 0 while this host serves degraded",
            self.fleet_connected.clone(),
        );
        self.registry.register(
            "llm_fleet_hosts",
            "Live hosts in the fleet, last seen through heartbeats",
            self.fleet_hosts.clone(),
        );
        self.registry.register(
            "llm_fleet_slice_tokens",
            "Units of each shared key's per-minute limit this host holds for one slice, by dimension",
            self.fleet_slice.clone(),
        );
        self
    }

    pub fn render(
        &self,
        depths: &[(String, i32, u64)],
        keys: &[KeyStatus],
        fleet: Option<FleetGauges>,
    ) -> String {
        if let Some(f) = fleet {
            self.fleet_connected.set(i64::from(f.connected));
            self.fleet_hosts.set(f.hosts as i64);
            self.fleet_slice.clear();
            for k in keys {
                let Some(part) = k.fleet else { continue };
                for b in k
                    .buckets
                    .iter()
                    .filter(|b| b.bucket.period == Period::Minute)
                {
                    let label = KeyDimensionLabel {
                        key: k.key.clone(),
                        dimension: b.bucket.dimension.as_str().into(),
                    };
                    let per_slice = b.bucket.limit * part.share * f.slice.as_secs_f64() / 60.0;
                    self.fleet_slice.get_or_create(&label).set(per_slice);
                }
            }
        }
        self.queue_depth.clear();
        for (key, priority, n) in depths {
            let label = KeyPriorityLabel {
                key: key.clone(),
                priority: priority.to_string(),
            };
            self.queue_depth.get_or_create(&label).set(*n as i64);
        }
        // A limit's source changes as it calibrates: drop the old series with it.
        self.limit_effective.clear();
        for k in keys {
            for b in k
                .buckets
                .iter()
                .filter(|b| b.bucket.period == Period::Minute)
            {
                let label = LimitLabel {
                    key: k.key.clone(),
                    dimension: b.bucket.dimension.as_str().into(),
                    source: b.bucket.source.as_str().into(),
                };
                self.limit_effective
                    .get_or_create(&label)
                    .set(b.bucket.limit);
            }
            // Requests in flight at once, configured or learned from refusals.
            if let Some(source) = k.concurrency_source {
                let label = LimitLabel {
                    key: k.key.clone(),
                    dimension: "concurrency".into(),
                    source: source.as_str().into(),
                };
                self.limit_effective
                    .get_or_create(&label)
                    .set(k.max_concurrency as f64);
            }
            let active = i64::from(!k.cooldown_remaining.is_zero());
            self.cooldown_active
                .get_or_create(&KeyLabel { key: k.key.clone() })
                .set(active);
        }
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out = "# metrics could not be encoded\n".into();
        }
        out
    }
}
