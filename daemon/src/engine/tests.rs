//! The engine's fixture, and grants and the queue on a fake clock: refill, bursts, all or nothing,
//! priorities, large requests at the head, cancelled waits.

use super::*;

pub(super) const T0_UNIX: i64 = 1_800_000_000_000;

pub(super) fn at(base: Instant, ms: u64) -> Now {
    Now {
        mono: base + Duration::from_millis(ms),
        unix_ms: T0_UNIX + ms as i64,
    }
}

pub(super) fn rate(dimension: Dimension, limit: f64, capacity: f64) -> Rate {
    Rate {
        dimension,
        period: Period::Minute,
        limit,
        capacity,
    }
}

pub(super) fn limits(rates: Vec<Rate>) -> KeyLimits {
    KeyLimits {
        rates,
        ..KeyLimits::default()
    }
}

pub(super) struct Fx {
    pub(super) e: Engine,
    pub(super) base: Instant,
}

#[allow(dead_code)]
impl Fx {
    /// Exact timing: no transit allowance unless a test asks for one.
    pub(super) fn new(keys: Vec<(&str, KeyLimits)>) -> Fx {
        let config = EngineConfig {
            transit_allowance: Duration::ZERO,
            ..EngineConfig::default()
        };
        Self::with_config(config, keys)
    }

    pub(super) fn with_config(config: EngineConfig, keys: Vec<(&str, KeyLimits)>) -> Fx {
        let base = Instant::now();
        let keys = keys.into_iter().map(|(k, l)| (k.to_string(), l)).collect();
        let e = Engine::new(config, keys, at(base, 0), 7).expect("engine");
        Fx { e, base }
    }

    pub(super) fn now(&self, ms: u64) -> Now {
        at(self.base, ms)
    }

    /// Starts with every bucket full.
    pub(super) fn filled(mut self) -> Fx {
        self.e.fill(self.now(0));
        self
    }

    pub(super) fn acquire(
        &mut self,
        key: &str,
        input: i64,
        output: i64,
        max_wait_ms: u64,
        ms: u64,
    ) -> Acquired {
        self.acquire_req(
            AcquireRequest {
                key: key.into(),
                input_tokens: input,
                output_tokens: output,
                max_wait: Duration::from_millis(max_wait_ms),
                ..AcquireRequest::default()
            },
            ms,
        )
    }

    pub(super) fn acquire_req(&mut self, req: AcquireRequest, ms: u64) -> Acquired {
        self.e.acquire(&req, self.now(ms)).expect("acquire")
    }

    pub(super) fn level(&mut self, key: &str, dim: Dimension, ms: u64) -> f64 {
        let st = self.e.status(self.now(ms));
        let k = st.iter().find(|k| k.key == key).expect("key in status");
        k.buckets
            .iter()
            .find(|b| b.bucket.dimension == dim)
            .expect("bucket")
            .bucket
            .level
    }

    pub(super) fn key_status(&mut self, key: &str, ms: u64) -> KeyStatus {
        self.e
            .status(self.now(ms))
            .into_iter()
            .find(|k| k.key == key)
            .expect("key in status")
    }
}

pub(super) fn lease(a: &Acquired) -> String {
    match a {
        Acquired::Granted(g) => g.lease_id.clone(),
        other => panic!("expected a grant, got {other:?}"),
    }
}

pub(super) fn waiter(a: &Acquired) -> WaiterId {
    match a {
        Acquired::Queued(w) => *w,
        other => panic!("expected to wait, got {other:?}"),
    }
}

pub(super) fn ok(status: u16) -> Outcome {
    Outcome {
        status,
        usage_known: true,
        attempt: 1,
        ..Outcome::default()
    }
}

pub(super) fn with_headers(status: u16, headers: &[(&str, &str)], unix_ms: i64) -> Outcome {
    Outcome {
        status,
        attempt: 1,
        signals: ProviderSignals::parse(headers.iter().copied(), "", unix_ms),
        headers: headers
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        ..Outcome::default()
    }
}

pub(super) fn granted_ids(answers: &[(WaiterId, WaiterAnswer)]) -> Vec<WaiterId> {
    answers
        .iter()
        .filter(|(_, a)| matches!(a, WaiterAnswer::Granted(_)))
        .map(|(w, _)| *w)
        .collect()
}

pub(super) fn rpm600_burst10() -> Fx {
    Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 600.0, 10.0)]),
    )])
    .filled()
}

#[test]
fn buckets_start_empty_and_refill_continuously() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 600.0, 10.0)]),
    )]);
    assert_eq!(fx.level("k", Dimension::Requests, 0), 0.0);
    assert!(matches!(
        fx.acquire("k", 0, 0, 0, 0),
        Acquired::NotGranted(_)
    ));
    // 600 per minute is one per 100 ms.
    assert!((fx.level("k", Dimension::Requests, 250) - 2.5).abs() < 1e-6);
    assert_eq!(fx.level("k", Dimension::Requests, 60_000), 10.0);
}

#[test]
fn burst_then_pacing() {
    let mut fx = rpm600_burst10();
    for _ in 0..10 {
        lease(&fx.acquire("k", 0, 0, 0, 0));
    }
    let w = waiter(&fx.acquire("k", 0, 0, 1000, 0));
    let wake = fx.e.next_wakeup(fx.now(0)).expect("a wakeup");
    assert_eq!(wake, fx.base + Duration::from_millis(100));
    fx.e.pump(fx.now(99));
    assert!(fx.e.drain_answers().is_empty());
    fx.e.pump(fx.now(100));
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![w]);
}

#[test]
fn refuses_at_once_with_not_before_when_capacity_cannot_come_in_time() {
    let mut fx = rpm600_burst10();
    for _ in 0..10 {
        lease(&fx.acquire("k", 0, 0, 0, 0));
    }
    // One waiter ahead: the next slot is 200 ms away, beyond a 150 ms max_wait.
    waiter(&fx.acquire("k", 0, 0, 1000, 0));
    match fx.acquire("k", 0, 0, 150, 0) {
        Acquired::NotGranted(r) => {
            assert_eq!(r.not_before_unix_ms, T0_UNIX + 200);
            assert_eq!(r.code, RefusalCode::Capacity);
            assert!(r.reason.contains("capacity"), "{}", r.reason);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(fx.e.waiting(), 1);
}

#[test]
fn all_or_nothing_across_ancestors() {
    let mut fx = Fx::new(vec![
        (
            "openai",
            limits(vec![rate(Dimension::Tokens, 6000.0, 1000.0)]),
        ),
        (
            "openai/gpt",
            limits(vec![rate(Dimension::Tokens, 60000.0, 5000.0)]),
        ),
    ])
    .filled();
    // A key with no limits of its own still counts on its configured ancestors.
    lease(&fx.acquire("openai/gpt/mini", 600, 0, 0, 0));
    assert_eq!(fx.level("openai", Dimension::Tokens, 0), 400.0);
    assert_eq!(fx.level("openai/gpt", Dimension::Tokens, 0), 4400.0);
    // 500 fits the model but not the organisation: nothing is taken from either.
    assert!(matches!(
        fx.acquire("openai/gpt", 500, 0, 0, 0),
        Acquired::NotGranted(_)
    ));
    assert_eq!(fx.level("openai", Dimension::Tokens, 0), 400.0);
    assert_eq!(fx.level("openai/gpt", Dimension::Tokens, 0), 4400.0);
}

#[test]
fn priority_then_arrival() {
    let mut fx = rpm600_burst10();
    for _ in 0..10 {
        lease(&fx.acquire("k", 0, 0, 0, 0));
    }
    let low1 = waiter(&fx.acquire_req(
        AcquireRequest {
            key: "k".into(),
            max_wait: Duration::from_secs(5),
            ..Default::default()
        },
        0,
    ));
    let low2 = waiter(&fx.acquire_req(
        AcquireRequest {
            key: "k".into(),
            max_wait: Duration::from_secs(5),
            ..Default::default()
        },
        1,
    ));
    let high = waiter(&fx.acquire_req(
        AcquireRequest {
            key: "k".into(),
            priority: 5,
            max_wait: Duration::from_secs(5),
            ..Default::default()
        },
        2,
    ));
    let mut order = Vec::new();
    for ms in [100, 200, 300] {
        fx.e.pump(fx.now(ms));
        order.extend(granted_ids(&fx.e.drain_answers()));
    }
    assert_eq!(order, vec![high, low1, low2]);
}

#[test]
fn a_large_head_is_not_starved_by_small_requests_behind_it() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Tokens, 60_000.0, 1000.0)]),
    )])
    .filled();
    lease(&fx.acquire("k", 900, 0, 0, 0));
    // 100 left; refill is 1 per ms. The big one needs 800.
    let big = waiter(&fx.acquire("k", 800, 0, 10_000, 0));
    // Small ones behind it would fit now, but must not jump the queue.
    let small = waiter(&fx.acquire("k", 50, 0, 10_000, 0));
    fx.e.pump(fx.now(10));
    assert!(fx.e.drain_answers().is_empty());
    fx.e.pump(fx.now(700));
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![big]);
    fx.e.pump(fx.now(750));
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![small]);
}

#[test]
fn a_cancelled_wait_leaves_the_queue_and_unblocks_those_behind() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Tokens, 60_000.0, 1000.0)]),
    )])
    .filled();
    lease(&fx.acquire("k", 900, 0, 0, 0));
    let big = waiter(&fx.acquire("k", 800, 0, 10_000, 0));
    let small = waiter(&fx.acquire("k", 50, 0, 10_000, 0));
    let refusal = fx.e.cancel(big, fx.now(5)).expect("was waiting");
    assert_eq!(refusal.waited, Duration::from_millis(5));
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![small]);
    assert_eq!(fx.e.waiting(), 0);
    assert!(fx.e.cancel(big, fx.now(6)).is_none());
}

#[test]
fn a_request_above_capacity_is_refused_at_once() {
    let mut fx = Fx::new(vec![
        ("a", limits(vec![rate(Dimension::Tokens, 60_000.0, 8000.0)])),
        ("a/b", KeyLimits::default()),
    ]);
    let err =
        fx.e.acquire(
            &AcquireRequest {
                key: "a/b".into(),
                input_tokens: 9000,
                ..Default::default()
            },
            fx.now(0),
        )
        .expect_err("never fits");
    assert!(matches!(err, EngineError::NeverFits { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("9000")
            && msg.contains("8000")
            && msg.contains("burst_tokens")
            && msg.contains("\"a\""),
        "{msg}"
    );
}

#[test]
fn a_bucket_granted_from_full_refills_only_after_the_transit_allowance() {
    let cfg = EngineConfig::default();
    assert_eq!(cfg.transit_allowance, Duration::from_millis(20));
    let mut fx = Fx::with_config(
        cfg,
        vec![("k", limits(vec![rate(Dimension::Requests, 60_000.0, 10.0)]))],
    )
    .filled();
    lease(&fx.acquire("k", 0, 0, 0, 0));
    // 1 per ms, but nothing for the first 20 ms: the provider has not seen the request yet.
    assert_eq!(fx.level("k", Dimension::Requests, 15), 9.0);
    assert_eq!(fx.level("k", Dimension::Requests, 20), 9.0);
    assert_eq!(fx.level("k", Dimension::Requests, 21), 10.0);
    // From a bucket that is not full, refill goes on at once.
    lease(&fx.acquire("k", 0, 0, 0, 21));
    lease(&fx.acquire("k", 0, 0, 0, 21));
    assert_eq!(fx.level("k", Dimension::Requests, 21), 8.0);
    let before = fx.level("k", Dimension::Requests, 21);
    assert!(fx.level("k", Dimension::Requests, 41) >= before);
}

/// The engine is pure and knows nothing of the wire: no file of it names the gRPC contract, the
/// server, the store, an async runtime or a clock of its own (its tests aside, which may start a
/// fake clock from the real one).
#[test]
fn the_engine_names_nothing_of_the_wire_the_server_the_store_or_io() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let mut read = 0;
    let mut folders = vec![dir.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("the engine's folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.to_string_lossy().ends_with("tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a source file");
            let code = text
                .split("#[cfg(test)]\nmod tests {")
                .next()
                .unwrap_or_default();
            read += 1;
            for word in [
                "llmctl_proto",
                "crate::server",
                "crate::store",
                "tokio",
                "std::fs",
                "std::net",
                "Instant::now()",
                "SystemTime::now()",
            ] {
                assert!(!code.contains(word), "{} uses {word}", path.display());
            }
        }
    }
    assert!(read > 20, "read {read} files of {}", dir.display());
}

/// A caller of `priority` on key "k" waiting at most `max_wait_ms`, at `ms`.
fn wait_on_k(fx: &mut Fx, priority: i32, max_wait_ms: u64, ms: u64) -> Acquired {
    fx.acquire_req(
        AcquireRequest {
            key: "k".into(),
            priority,
            max_wait: Duration::from_millis(max_wait_ms),
            ..Default::default()
        },
        ms,
    )
}

#[test]
fn a_new_waiter_waits_for_what_waits_at_its_priority_or_above_and_is_refused_when_that_is_too_long()
{
    // 10 a second, the burst spent: each request ahead is 100 ms more.
    let mut fx = rpm600_burst10();
    for _ in 0..10 {
        lease(&fx.acquire("k", 0, 0, 0, 0));
    }
    let crowd: Vec<WaiterId> = (0..20)
        .map(|_| waiter(&wait_on_k(&mut fx, 0, 60_000, 0)))
        .collect();
    // Nothing waits at priority 5: the first goes in 100 ms, the second in 200 ms.
    waiter(&wait_on_k(&mut fx, 5, 150, 0));
    assert!(matches!(
        wait_on_k(&mut fx, 5, 150, 0),
        Acquired::NotGranted(_)
    ));
    waiter(&wait_on_k(&mut fx, 5, 250, 0));
    // At priority 0, 22 wait ahead: 2.3 s.
    assert!(matches!(
        wait_on_k(&mut fx, 0, 2_200, 0),
        Acquired::NotGranted(_)
    ));
    waiter(&wait_on_k(&mut fx, 0, 2_400, 0));
    // 23 wait: a 24th goes in 2.4 s. A cancel in the middle of the crowd frees its place for
    // those who come after.
    assert_eq!(fx.e.waiting(), 23);
    assert!(matches!(
        wait_on_k(&mut fx, 0, 2_350, 0),
        Acquired::NotGranted(_)
    ));
    fx.e.cancel(crowd[7], fx.now(0));
    waiter(&wait_on_k(&mut fx, 0, 2_350, 0));
}
