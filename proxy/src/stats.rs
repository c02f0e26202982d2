//! The proxy's own figures: connections, requests by upstream and status, waits, refusals of
//! its own bounds and connections it closed, served in Prometheus' text format.

use crate::forward::Proxy;
use crate::shape::bytes_body;
use crate::upstream::Body;
use http::{HeaderValue, Response};

/// The proxy's own figures.
#[derive(Default)]
pub(crate) struct ProxyStats {
    pub(crate) connections: std::sync::atomic::AtomicI64,
    /// Requests by upstream (or `-` for none) and status.
    requests: std::sync::Mutex<std::collections::BTreeMap<(String, u16), u64>>,
    pub(crate) no_uid_warned: std::sync::atomic::AtomicBool,
    /// Requests that waited for room in the body budget.
    pub(crate) body_waits: std::sync::atomic::AtomicU64,
    /// Limited requests answered, and the time they waited for grants (ms).
    waits: std::sync::atomic::AtomicU64,
    waited_ms: std::sync::atomic::AtomicU64,
    /// Refusals of the proxy's own bounds, by reason.
    refusals: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// Client connections the proxy closed, by reason.
    closed: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
}

impl Proxy {
    /// Counts an answer by its upstream (`-` for none) and status, and, for a limited call (on
    /// `key`), the time it waited for grants.
    pub(crate) fn count_answer(&self, upstream: String, key: &str, resp: &Response<Body>) {
        if !key.is_empty() {
            use std::sync::atomic::Ordering::Relaxed;
            let waited = crate::steer::header(resp.headers(), "x-llmctl-waited-ms")
                .and_then(|w| w.parse::<u64>().ok())
                .unwrap_or(0);
            self.stats.waits.fetch_add(1, Relaxed);
            self.stats.waited_ms.fetch_add(waited, Relaxed);
        }
        *self
            .stats
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((upstream, resp.status().as_u16()))
            .or_insert(0) += 1;
    }

    /// Counts a refusal of one of the proxy's own bounds.
    pub(crate) fn count_refusal(&self, reason: &'static str) {
        count(&self.stats.refusals, reason);
    }

    /// Says once that the kernel named no user for a loopback peer (no `sock_diag`):
    /// `max_connections_per_uid` is not applied then.
    pub(crate) fn warn_no_uid_once(&self) {
        if !self
            .stats
            .no_uid_warned
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            tracing::warn!("llmctl proxy: the kernel names no user for loopback peers here (no sock_diag); max_connections_per_uid is not applied, max_connections is");
        }
    }

    /// Counts a client connection the proxy closed.
    pub(crate) fn count_closed(&self, reason: &'static str) {
        count(&self.stats.closed, reason);
    }

    /// The proxy's figures in Prometheus' text format.
    pub(crate) fn metrics(&self) -> Response<Body> {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(out, "# HELP llmctl_proxy_connections Client connections open.\n# TYPE llmctl_proxy_connections gauge");
        let _ = writeln!(
            out,
            "llmctl_proxy_connections {}",
            self.stats
                .connections
                .load(std::sync::atomic::Ordering::Relaxed)
        );
        let _ = writeln!(out, "# HELP llmctl_proxy_requests_total Requests answered, by upstream and status.\n# TYPE llmctl_proxy_requests_total counter");
        for ((up, status), n) in self
            .stats
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "llmctl_proxy_requests_total{{upstream=\"{up}\",status=\"{status}\"}} {n}"
            );
        }
        {
            use std::sync::atomic::Ordering::Relaxed;
            let gauges = [
                (
                    "llmctl_proxy_body_bytes_held",
                    "gauge",
                    "Request-body bytes limited requests hold in memory (their parse included).",
                    self.bodies.held().to_string(),
                ),
                (
                    "llmctl_proxy_body_bytes_max",
                    "gauge",
                    "The most they may hold together (max_body_memory).",
                    self.bodies.max().to_string(),
                ),
                (
                    "llmctl_proxy_body_waits_total",
                    "counter",
                    "Requests that waited for room to read their bodies.",
                    self.stats.body_waits.load(Relaxed).to_string(),
                ),
                (
                    "llmctl_proxy_limited_requests_total",
                    "counter",
                    "Limited requests answered.",
                    self.stats.waits.load(Relaxed).to_string(),
                ),
                (
                    "llmctl_proxy_wait_seconds_total",
                    "counter",
                    "Time limited requests waited for grants and retry delays, in seconds.",
                    format!("{:.3}", self.stats.waited_ms.load(Relaxed) as f64 / 1000.0),
                ),
            ];
            for (name, kind, help, v) in gauges {
                let _ = writeln!(
                    out,
                    "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
                );
            }
        }
        for (name, help, table) in [
            ("llmctl_proxy_refusals_total", "Requests or connections refused by the proxy's own bounds, by reason.", &self.stats.refusals),
            ("llmctl_proxy_connections_closed_total", "Client connections the proxy closed: idle past their deadline, or the oldest idle closed for a new one at a bound (crowded).", &self.stats.closed),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (reason, n) in table.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                let _ = writeln!(out, "{name}{{reason=\"{reason}\"}} {n}");
            }
        }
        let mut r = Response::new(bytes_body(out));
        r.headers_mut().insert(
            "content-type",
            HeaderValue::from_static("text/plain; version=0.0.4"),
        );
        r
    }
}

pub(crate) fn count(
    table: &std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    reason: &'static str,
) {
    *table
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(reason)
        .or_insert(0) += 1;
}
