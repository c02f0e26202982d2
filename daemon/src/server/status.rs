//! Status and Watch: the daemon's state on the wire, built a few keys at a time under the
//! engine's lock, shared by every Watch stream, and bounded in streams and bytes.

use super::convert::codes;
use super::{now, Shared};
use crate::engine::KeyStatus;
use llmctl_proto::v1 as pb;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

/// Keys whose status is built under one hold of the engine's lock.
const STATUS_CHUNK: usize = 64;

/// Watch streams one process may hold at once, and all processes together.
pub const MAX_WATCHES_PER_PROCESS: usize = 2;
pub const MAX_WATCHES: usize = 64;
/// The most status bytes a Watch stream is sent per second.
const WATCH_BYTES_PER_SECOND: f64 = 2.0 * 1024.0 * 1024.0;

/// A Watch stream's place in the bounds, given back when it ends.
struct WatchSlot {
    shared: Arc<Shared>,
    pid: Option<u32>,
}

impl WatchSlot {
    fn take(shared: &Arc<Shared>, pid: Option<u32>) -> Result<WatchSlot, Status> {
        let mut w = shared.watches.lock().unwrap_or_else(|p| p.into_inner());
        let total: usize = w.values().sum();
        let mine = pid.map_or(0, |p| w.get(&p).copied().unwrap_or(0));
        if total >= MAX_WATCHES || mine >= MAX_WATCHES_PER_PROCESS {
            return Err(Status::resource_exhausted(format!(
                "{} Watch streams are open ({mine} from this process); a process may hold \
                 {MAX_WATCHES_PER_PROCESS} and all together {MAX_WATCHES}: close one, or read \
                 Status now and then instead",
                total
            )));
        }
        *w.entry(pid.unwrap_or(0)).or_insert(0) += 1;
        Ok(WatchSlot {
            shared: shared.clone(),
            pid,
        })
    }
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        let mut w = self
            .shared
            .watches
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let k = self.pid.unwrap_or(0);
        if let Some(n) = w.get_mut(&k) {
            *n -= 1;
            if *n == 0 {
                w.remove(&k);
            }
        }
    }
}

/// The shortest Watch interval.
pub const MIN_WATCH_INTERVAL_MS: i64 = 200;

/// The part of a status about keys starting with `prefix`.
pub(super) fn filtered(st: &pb::StatusResponse, prefix: &str) -> pb::StatusResponse {
    if prefix.is_empty() {
        return st.clone();
    }
    pb::StatusResponse {
        keys: st
            .keys
            .iter()
            .filter(|k| k.key.starts_with(prefix))
            .cloned()
            .collect(),
        events: st
            .events
            .iter()
            .filter(|e| e.key.starts_with(prefix))
            .cloned()
            .collect(),
        runs: st.runs.clone(),
        clients: st.clients.clone(),
        socket: st.socket.clone(),
        store_error: st.store_error.clone(),
        fleet: st.fleet.clone(),
        ..*st
    }
}

/// A key's status on the wire.
fn key_status(k: KeyStatus) -> pb::KeyStatus {
    pb::KeyStatus {
        breaker: k.breaker.as_str().to_string(),
        breaker_open_remaining_ms: k.breaker_open_remaining.as_millis() as i64,
        key: k.key,
        buckets: k
            .buckets
            .into_iter()
            .map(|b| pb::Bucket {
                dimension: b.bucket.dimension.as_str().into(),
                period: b.bucket.period.as_str().into(),
                limit: b.bucket.limit,
                capacity: b.bucket.capacity,
                level: b.bucket.level,
                source: b.bucket.source.as_str().into(),
                capacity_source: b.capacity_source.as_str().into(),
                configured_limit: b.configured_limit.unwrap_or(0.0),
                configured_capacity: b.configured_capacity.unwrap_or(0.0),
                learned_limit: b.learned_limit.unwrap_or(0.0),
                learned_capacity: b.learned_capacity.unwrap_or(0.0),
                learned_source: b.learned_source.map_or("", |s| s.as_str()).into(),
                dimension_code: codes::dimension(b.bucket.dimension),
                period_code: codes::period(b.bucket.period),
                source_code: codes::source(Some(b.bucket.source)),
                capacity_source_code: codes::source(Some(b.capacity_source)),
                learned_source_code: codes::source(b.learned_source),
                headers_limit: b.headers_limit.unwrap_or(0.0),
                beneath_headers: b.beneath_headers,
            })
            .collect(),
        in_flight: k.in_flight as i64,
        max_concurrency: k.max_concurrency as i64,
        queue_depth: k.queue_depth as i64,
        queue_wait_p50_ms: k.queue_wait_p50_ms as i64,
        queue_wait_p95_ms: k.queue_wait_p95_ms as i64,
        rate_limited_total: k.rate_limited_total as i64,
        rate_limited_per_minute: k.rate_limited_per_minute,
        tokens_reserved: k.tokens_reserved as i64,
        tokens_used: k.tokens_used as i64,
        cooldown_remaining_ms: k.cooldown_remaining.as_millis() as i64,
        fallbacks_total: k.fallbacks_total as i64,
        requests_total: k.requests_total as i64,
        granted_total: k.granted_total as i64,
        cooldown_reason: k.cooldown_reason,
        tokens_outstanding: k.tokens_outstanding as i64,
        ancestors: k.ancestors,
        last_headers: k
            .last_headers
            .iter()
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect(),
        requests_per_second: k.requests_per_second,
        rejected_total: k.rejected_total as i64,
        cancelled_total: k.cancelled_total as i64,
        settled_total: k.settled_total as i64,
        withdrawn_total: k.withdrawn_total as i64,
        expired_total: k.expired_total as i64,
        fallbacks_per_minute: k.fallbacks_per_minute,
        retries_total: k.retries_total as i64,
        give_ups_total: k.give_ups_total as i64,
        breaker_code: codes::breaker(k.breaker),
        provider_code: codes::provider(k.provider),
        output_counted_as_code: codes::output_counting(k.output_counted_as),
        output_counted_as_source_code: codes::accounting_source(k.output_counted_as_source),
        concurrency_source_code: codes::source(k.concurrency_source),
        provider: k.provider.map_or("", |p| p.as_str()).into(),
        output_counted_as: k.output_counted_as.as_str().into(),
        output_counted_as_source: k.output_counted_as_source.as_str().into(),
        headers_ignored_total: k.headers_ignored_total as i64,
        fleet_shared: k.fleet.is_some(),
        fleet_share: k.fleet.map_or(1.0, |p| p.share),
        fleet_line: k.fleet.is_some_and(|p| p.line),
        fleet_slots: k.fleet.and_then(|p| p.slots).map_or(-1, |s| s as i64),
        output_tokens_estimate: k.output_tokens_estimate.map_or(0, |e| e as i64),
        undeclared_tokens_reserved: k.undeclared_tokens_reserved as i64,
        undeclared_tokens_used: k.undeclared_tokens_used as i64,
        settled_at_estimate_total: k.settled_at_estimate_total as i64,
        concurrency_source: k
            .concurrency_source
            .map_or(String::new(), |s| s.as_str().to_string()),
        learned_concurrency: k.learned_concurrency.map_or(0, |c| c as i64),
        daily_quota_until_unix_ms: k.daily_quota.as_ref().map_or(0, |d| d.0),
        daily_quota: k
            .daily_quota
            .as_ref()
            .map_or(String::new(), |d| d.1.clone()),
        fixed_window_ms: k.fixed_window.map_or(0, |w| w.as_millis() as i64),
        plan_windows: k
            .plan_windows
            .iter()
            .map(|w| pb::PlanWindow {
                name: w.window.name.clone(),
                label: w.label.clone(),
                used: w.window.used.unwrap_or(-1.0),
                resets_at_unix_ms: w.window.resets_at_unix_ms.unwrap_or(0),
                window_minutes: w.window.minutes.map_or(0, i64::from),
                status: w.window.status.clone().unwrap_or_default(),
                closed: w.closed,
                binding: w.binding,
            })
            .collect(),
    }
}

/// The fleet on the wire.
fn fleet_status(f: &super::fleet::FleetView) -> pb::FleetStatus {
    pb::FleetStatus {
        host: f.host.clone(),
        redis: f.redis.clone(),
        connected: f.is_connected(),
        hosts: f.hosts() as i64,
        last_error: f.last_error(),
        slice_ms: f.slice.as_millis() as i64,
        redis_commands_total: f.commands.load(std::sync::atomic::Ordering::Relaxed) as i64,
        redis_cluster: f.cluster.load(std::sync::atomic::Ordering::Relaxed),
    }
}

impl Shared {
    /// The status, built at most once per `max_age` however many callers ask: the others get
    /// the same one.
    pub(crate) async fn status_shared(&self, max_age: Duration) -> Arc<pb::StatusResponse> {
        let mut cache = self.status_cache.lock().await;
        if let Some((at, st)) = cache.as_ref() {
            if at.elapsed() < max_age {
                return st.clone();
            }
        }
        let st = Arc::new(self.status().await);
        *cache = Some((std::time::Instant::now(), st.clone()));
        st
    }

    /// The status, built `STATUS_CHUNK` keys at a time under the engine's lock, letting other
    /// calls in between: thousands of keys never hold up an Acquire for long.
    pub(crate) async fn status(&self) -> pb::StatusResponse {
        let mut keys = Vec::new();
        let mut from = 0;
        loop {
            let part = {
                let mut core = self.core();
                if from >= core.engine.key_count() {
                    break;
                }
                core.engine.status_of(from..from + STATUS_CHUNK, now())
            };
            from += STATUS_CHUNK;
            keys.extend(part);
            tokio::task::yield_now().await;
        }
        keys.sort_by(|a, b| a.key.cmp(&b.key));
        let t = now();
        let (sessions, events, runs, clients, spending) = {
            let mut core = self.core();
            (
                core.sessions.clone(),
                core.engine.recent_events(50),
                core.engine.runs_status(t),
                core.engine.clients_status(t),
                core.engine.runs_spending(t),
            )
        };
        let spent: std::collections::HashMap<&str, &crate::engine::SpenderStatus> =
            spending.iter().map(|s| (s.id.as_str(), s)).collect();
        let ms = |d: Option<std::time::Duration>| d.map_or(0, |d| d.as_millis() as i64);
        let health = self.storage.health();
        pb::StatusResponse {
            keys: keys.into_iter().map(key_status).collect(),
            now_unix_ms: t.unix_ms,
            started_unix_ms: self.started_unix_ms,
            sessions: sessions.values().map(|s| s.count).sum::<usize>() as i64,
            socket: self.socket.clone(),
            duplicates_suppressed: self
                .duplicates_suppressed
                .load(std::sync::atomic::Ordering::Relaxed)
                as i64,
            events: events
                .into_iter()
                .map(|e| pb::Event {
                    unix_ms: e.unix_ms,
                    key: e.key,
                    kind: e.kind.as_str().to_string(),
                    kind_code: codes::event_kind(e.kind),
                    message: e.message,
                })
                .collect(),
            runs: runs
                .into_iter()
                .map(|r| {
                    let spent = spent.get(r.run_id.as_str());
                    pb::RunStatus {
                        calls: r.calls as i64,
                        retries: r.retries as i64,
                        started_unix_ms: r.started_unix_ms,
                        wall_ms: r.wall.as_millis() as i64,
                        max_calls: r.budget.max_calls.unwrap_or(0) as i64,
                        max_retries: r.budget.max_retries.unwrap_or(0) as i64,
                        max_wall_time_ms: ms(r.budget.max_wall_time),
                        exhausted: r.exhausted.unwrap_or_default(),
                        requests_per_second: spent.map_or(0.0, |s| s.requests_per_second),
                        tokens_per_minute: spent.map_or(0.0, |s| s.tokens_per_minute),
                        in_flight: spent.map_or(0, |s| s.in_flight as i64),
                        queue_depth: spent.map_or(0, |s| s.queue_depth as i64),
                        rate_limited_total: spent.map_or(0, |s| s.rate_limited_total as i64),
                        run_id: r.run_id,
                    }
                })
                .collect(),
            clients: {
                let users = user_names();
                clients
                    .into_iter()
                    .map(|c| {
                        let session = sessions.get(&c.id).cloned().unwrap_or_default();
                        client_status(c, &session, &users)
                    })
                    .collect()
            },
            claims_lost_at_unix_ms: self.claims_lost_at_in_force(t.unix_ms).unwrap_or(0),
            store_failing_since_unix_ms: health.failing_since_unix_ms,
            store_error: health.error,
            fleet: self.fleet.as_deref().map(fleet_status),
        }
    }
}

/// A client's spending on the wire, with the process holding its session: its name from
/// /proc and its user from /etc/passwd, when they can be read.
fn client_status(
    c: crate::engine::SpenderStatus,
    s: &super::SessionInfo,
    users: &std::collections::HashMap<u32, String>,
) -> pb::ClientStatus {
    let process_name = s
        .pid
        .and_then(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).ok())
        .map(|n| llmctl_proto::text::for_terminal(n.trim()))
        .unwrap_or_default();
    pb::ClientStatus {
        client_id: c.id,
        pid: s.pid.and_then(|p| i32::try_from(p).ok()).unwrap_or(0),
        process_name,
        uid: s.uid.map_or(-1, i64::from),
        user: s
            .uid
            .and_then(|u| users.get(&u).cloned())
            .unwrap_or_default(),
        requests_per_second: c.requests_per_second,
        tokens_per_minute: c.tokens_per_minute,
        in_flight: c.in_flight as i64,
        queue_depth: c.queue_depth as i64,
        rate_limited_total: c.rate_limited_total as i64,
        granted_total: c.granted_total as i64,
    }
}

/// Users' names by uid, from /etc/passwd (read once per status; users only a directory service
/// knows show by uid).
fn user_names() -> std::collections::HashMap<u32, String> {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            let (name, _, id) = (f.next()?, f.next()?, f.next()?);
            Some((id.parse().ok()?, name.to_string()))
        })
        .collect()
}

/// A Watch stream: one status per interval (shared with every other stream), paced by its size,
/// within the bounds on streams.
pub(super) fn watch(
    shared: &Arc<Shared>,
    pid: Option<u32>,
    r: pb::WatchRequest,
) -> Result<ReceiverStream<Result<pb::StatusResponse, Status>>, Status> {
    let interval_ms = r.interval_ms;
    if interval_ms < 0 {
        return Err(Status::invalid_argument(format!(
            "interval_ms = {interval_ms} is negative"
        )));
    }
    let interval = Duration::from_millis(if interval_ms == 0 {
        1000
    } else {
        interval_ms.clamp(MIN_WATCH_INTERVAL_MS, 60_000) as u64
    });
    let prefix = r.key_prefix;
    let watching = WatchSlot::take(shared, pid)?;
    let (tx, rx) = mpsc::channel(2);
    let shared = shared.clone();
    let mut stop = shared.stopping.clone();
    tokio::spawn(async move {
        let _watching = watching;
        loop {
            // Every watcher shares one status per interval: more watchers cost no more
            // time under the engine's lock.
            let st = shared.status_shared(interval).await;
            let msg = filtered(&st, &prefix);
            // A large status comes no faster than WATCH_BYTES_PER_SECOND allows.
            let paced = Duration::from_secs_f64(
                prost::Message::encoded_len(&msg) as f64 / WATCH_BYTES_PER_SECOND,
            );
            if tx.send(Ok(msg)).await.is_err() {
                return;
            }
            tokio::select! {
                _ = tokio::time::sleep(interval.max(paced)) => {}
                _ = stop.wait_for(|s| *s) => return,
                _ = tx.closed() => return,
            }
        }
    });
    Ok(ReceiverStream::new(rx))
}
