//! Every engine rule, on a fake clock.

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

fn rpm600_burst10() -> Fx {
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
fn reserve_then_settle_refunds_and_charges_debt() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::OutputTokens, 60_000.0, 10_000.0)]),
    )])
    .filled();
    let l = lease(&fx.acquire("k", 0, 1000, 0, 0));
    assert_eq!(fx.level("k", Dimension::OutputTokens, 0), 9000.0);
    let mut o = ok(200);
    o.output_tokens = 100;
    assert_eq!(
        fx.e.report(&l, &o, fx.now(0)).expect("report").action,
        Action::Done
    );
    assert_eq!(fx.level("k", Dimension::OutputTokens, 0), 9900.0);
    let st = fx.key_status("k", 0);
    assert_eq!(
        (st.tokens_reserved, st.tokens_used, st.tokens_outstanding),
        (1000, 100, 0)
    );
    // More than reserved: the bucket goes into debt.
    let l = lease(&fx.acquire("k", 0, 9900, 0, 0));
    o.output_tokens = 12_000;
    fx.e.report(&l, &o, fx.now(0)).expect("report");
    assert_eq!(fx.level("k", Dimension::OutputTokens, 0), -2100.0);
    // Debt holds requests back until it is repaid by refill.
    assert!(matches!(
        fx.acquire("k", 0, 1, 0, 0),
        Acquired::NotGranted(_)
    ));
}

#[test]
fn cached_input_is_excluded_unless_configured() {
    let mut l = limits(vec![rate(Dimension::InputTokens, 60_000.0, 10_000.0)]);
    let mut fx = Fx::new(vec![("k", l.clone())]).filled();
    let id = lease(&fx.acquire("k", 1000, 0, 0, 0));
    let mut o = ok(200);
    o.input_tokens = 1000;
    o.cached_input_tokens = 800;
    fx.e.report(&id, &o, fx.now(0)).expect("report");
    assert_eq!(fx.level("k", Dimension::InputTokens, 0), 9800.0);

    l.cached_input_counts = true;
    let mut fx = Fx::new(vec![("k", l)]).filled();
    let id = lease(&fx.acquire("k", 1000, 0, 0, 0));
    fx.e.report(&id, &o, fx.now(0)).expect("report");
    assert_eq!(fx.level("k", Dimension::InputTokens, 0), 9000.0);
}

#[test]
fn output_counted_as_reserved_keeps_max_tokens() {
    let mut l = limits(vec![rate(Dimension::Tokens, 60_000.0, 10_000.0)]);
    l.output_counted_as = Some(OutputCounting::Reserved);
    let mut fx = Fx::new(vec![("k", l)]).filled();
    let id = lease(&fx.acquire("k", 100, 1000, 0, 0));
    let mut o = ok(200);
    o.input_tokens = 100;
    o.output_tokens = 10;
    fx.e.report(&id, &o, fx.now(0)).expect("report");
    assert_eq!(fx.level("k", Dimension::Tokens, 0), 8900.0);
}

#[test]
fn an_unreported_lease_is_settled_at_its_estimate_when_its_ttl_ends() {
    let cfg = EngineConfig {
        lease_ttl: Duration::from_secs(1),
        ..EngineConfig::default()
    };
    let mut l = limits(vec![rate(Dimension::Tokens, 60.0, 1000.0)]);
    l.max_concurrency = Some(1);
    let mut fx = Fx::with_config(cfg, vec![("k", l)]).filled();
    let id = lease(&fx.acquire("k", 300, 0, 0, 0));
    let w = waiter(&fx.acquire("k", 1, 0, 5000, 0));
    assert_eq!(fx.e.expire(fx.now(999)), 0);
    assert_eq!(fx.e.expire(fx.now(1000)), 1);
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![w]);
    // Settled at the estimate: the 300 tokens stay spent.
    assert!(fx.level("k", Dimension::Tokens, 1000) < 701.0);
    assert!(matches!(
        fx.e.report(&id, &ok(200), fx.now(1001)),
        Err(EngineError::UnknownLease(_))
    ));
}

#[test]
fn a_429_with_retry_after_cools_the_key_and_its_descendants() {
    let mut fx = Fx::new(vec![(
        "p",
        limits(vec![rate(Dimension::Requests, 6000.0, 100.0)]),
    )])
    .filled();
    let id = lease(&fx.acquire("p", 0, 0, 0, 0));
    let advice =
        fx.e.report(
            &id,
            &with_headers(429, &[("retry-after", "2")], T0_UNIX),
            fx.now(0),
        )
        .expect("report");
    assert_eq!(advice.action, Action::Retry);
    assert_eq!(advice.retry_after, Duration::from_secs(2));
    match fx.acquire("p/child", 0, 0, 500, 10) {
        Acquired::NotGranted(r) => {
            assert_eq!(r.not_before_unix_ms, T0_UNIX + 2000);
            assert_eq!(r.code, RefusalCode::Cooldown);
            assert!(r.reason.contains("cooling down"), "{}", r.reason);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        fx.acquire("p", 0, 0, 0, 1999),
        Acquired::NotGranted(_)
    ));
    assert!(fx.key_status("p", 1000).cooldown_remaining == Duration::from_secs(1));
    // The refusal emptied the bucket until the cooldown's end: it goes once one request refilled.
    lease(&fx.acquire("p", 0, 0, 0, 2020));
}

#[test]
fn a_cooldown_never_shortens() {
    let mut fx = Fx::new(vec![("p", KeyLimits::default())]);
    let until =
        fx.e.cooldown("p", Duration::from_secs(10), "maintenance", fx.now(0))
            .expect("cooldown");
    assert_eq!(until, T0_UNIX + 10_000);
    let again =
        fx.e.cooldown("p", Duration::from_secs(1), "", fx.now(100))
            .expect("cooldown");
    assert_eq!(again, T0_UNIX + 10_000);
    let id_429 = {
        let st = fx.key_status("p", 5000);
        assert_eq!(st.cooldown_reason, "maintenance");
        st.cooldown_remaining
    };
    assert_eq!(id_429, Duration::from_secs(5));
    assert!(matches!(
        fx.acquire("p", 0, 0, 0, 9999),
        Acquired::NotGranted(_)
    ));
    lease(&fx.acquire("p", 0, 0, 0, 10_000));
}

#[test]
fn one_probe_after_a_cooldown_then_the_rest_when_it_succeeds() {
    let roomy = limits(vec![rate(Dimension::Requests, 6_000_000.0, 100_000.0)]);
    let mut fx = Fx::new(vec![("p", roomy)]).filled();
    let a = lease(&fx.acquire("p", 0, 0, 0, 0));
    fx.e.report(&a, &with_headers(429, &[], T0_UNIX), fx.now(0))
        .expect("report");
    // No delay named: the base cooldown, 1 s.
    // The bucket, emptied until the cooldown's end, refills for the probe.
    let probe = lease(&fx.acquire("p", 0, 0, 0, 1001));
    let w = waiter(&fx.acquire("p", 0, 0, 5000, 1001));
    fx.e.pump(fx.now(1500));
    assert!(
        fx.e.drain_answers().is_empty(),
        "the rest wait for the probe"
    );
    fx.e.report(&probe, &ok(200), fx.now(1600)).expect("report");
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![w]);
    lease(&fx.acquire("p", 0, 0, 0, 1601));
}

#[test]
fn repeated_429s_escalate_up_to_the_cap_but_in_flight_ones_do_not() {
    let cfg = EngineConfig {
        cooldown_base: Duration::from_secs(1),
        cooldown_max: Duration::from_secs(4),
        ..EngineConfig::default()
    };
    let roomy = limits(vec![rate(Dimension::Requests, 6_000_000.0, 100_000.0)]);
    let mut fx = Fx::with_config(cfg, vec![("p", roomy)]).filled();
    let a = lease(&fx.acquire("p", 0, 0, 0, 0));
    let b = lease(&fx.acquire("p", 0, 0, 0, 0));
    let r429 = with_headers(429, &[], T0_UNIX);
    fx.e.report(&a, &r429, fx.now(0)).expect("report");
    // b was already in flight: its 429 does not escalate.
    fx.e.report(&b, &r429, fx.now(10)).expect("report");
    assert_eq!(
        fx.key_status("p", 10).cooldown_remaining,
        Duration::from_millis(990)
    );
    // Each probe goes a moment after the cooldown, once the emptied bucket has a request.
    let mut t = 1001;
    for expected in [2000, 4000, 4000] {
        let probe = lease(&fx.acquire("p", 0, 0, 0, t));
        fx.e.report(&probe, &r429, fx.now(t)).expect("report");
        assert_eq!(
            fx.key_status("p", t).cooldown_remaining,
            Duration::from_millis(expected)
        );
        t += expected + 1;
    }
    // The provider's own longer delay is a floor above the cap.
    let probe = lease(&fx.acquire("p", 0, 0, 0, t));
    fx.e.report(
        &probe,
        &with_headers(429, &[("retry-after", "30")], T0_UNIX),
        fx.now(t),
    )
    .expect("report");
    assert_eq!(
        fx.key_status("p", t).cooldown_remaining,
        Duration::from_secs(30)
    );
}

#[test]
fn remaining_headers_lower_a_bucket_and_limit_headers_create_one() {
    let mut fx = Fx::new(vec![(
        "o",
        limits(vec![rate(Dimension::Requests, 6000.0, 100.0)]),
    )])
    .filled();
    let id = lease(&fx.acquire("o", 0, 0, 0, 0));
    let h = [
        ("x-ratelimit-limit-requests", "6000"),
        ("x-ratelimit-remaining-requests", "12"),
        ("x-ratelimit-limit-tokens", "90000"),
        ("x-ratelimit-remaining-tokens", "45000"),
        ("x-ratelimit-reset-tokens", "30s"),
    ];
    fx.e.report(&id, &with_headers(200, &h, T0_UNIX), fx.now(0))
        .expect("report");
    assert_eq!(fx.level("o", Dimension::Requests, 0), 12.0);
    let st = fx.key_status("o", 0);
    let tokens = st
        .buckets
        .iter()
        .find(|b| b.bucket.dimension == Dimension::Tokens)
        .expect("created");
    assert_eq!(
        (
            tokens.bucket.limit,
            tokens.bucket.level,
            tokens.bucket.source
        ),
        (90000.0, 45000.0, LimitSource::Headers)
    );
    assert_eq!(
        st.last_headers
            .get("x-ratelimit-remaining-requests")
            .map(String::as_str),
        Some("12")
    );

    // Anthropic style, on a key with no config at all.
    let id = lease(&fx.acquire("a", 0, 0, 0, 0));
    let h = [
        ("anthropic-ratelimit-input-tokens-limit", "40000"),
        ("anthropic-ratelimit-input-tokens-remaining", "1000"),
        (
            "anthropic-ratelimit-input-tokens-reset",
            "2027-01-15T08:00:00Z",
        ),
        ("anthropic-ratelimit-requests-remaining", "junk"),
    ];
    fx.e.report(&id, &with_headers(200, &h, T0_UNIX), fx.now(0))
        .expect("report");
    assert_eq!(fx.level("a", Dimension::InputTokens, 0), 1000.0);
    // A higher remaining never raises a bucket.
    let id = lease(&fx.acquire("o", 0, 0, 0, 0));
    fx.e.report(
        &id,
        &with_headers(200, &[("x-ratelimit-remaining-requests", "5000")], T0_UNIX),
        fx.now(0),
    )
    .expect("report");
    assert_eq!(fx.level("o", Dimension::Requests, 0), 11.0);
}

#[test]
fn a_dead_client_gives_back_its_concurrency_but_not_its_tokens() {
    let mut l = limits(vec![rate(Dimension::Tokens, 60.0, 1000.0)]);
    l.max_concurrency = Some(1);
    let mut fx = Fx::new(vec![("k", l)]).filled();
    let mine = AcquireRequest {
        key: "k".into(),
        input_tokens: 100,
        client_id: "c1".into(),
        ..Default::default()
    };
    let id = lease(&fx.acquire_req(mine, 0));
    let w = waiter(&fx.acquire("k", 1, 0, 5000, 0));
    assert_eq!(fx.key_status("k", 0).in_flight, 1);
    assert_eq!(fx.e.release_client("other", fx.now(1)), 0);
    assert_eq!(fx.e.release_client("c1", fx.now(1)), 1);
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![w]);
    assert!(fx.level("k", Dimension::Tokens, 1) < 900.0);
    // The lease itself can still be reported.
    fx.e.report(&id, &ok(200), fx.now(2)).expect("report");
    assert_eq!(fx.key_status("k", 2).in_flight, 1);
}

#[test]
fn concurrency_limit_holds_requests_until_a_report() {
    let l = KeyLimits {
        max_concurrency: Some(2),
        ..KeyLimits::default()
    };
    let mut fx = Fx::new(vec![("k", l)]);
    let a = lease(&fx.acquire("k", 0, 0, 0, 0));
    lease(&fx.acquire("k", 0, 0, 0, 0));
    match fx.acquire("k", 0, 0, 0, 0) {
        Acquired::NotGranted(r) => {
            assert_eq!(r.not_before_unix_ms, 0);
            assert_eq!(r.code, RefusalCode::Concurrency);
        }
        other => panic!("{other:?}"),
    }
    let w = waiter(&fx.acquire("k", 0, 0, 1000, 0));
    fx.e.report(&a, &ok(200), fx.now(3)).expect("report");
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![w]);
}

#[test]
fn snapshot_and_restore_refill_for_the_time_passed() {
    let mk = || {
        Fx::new(vec![(
            "k",
            limits(vec![rate(Dimension::Tokens, 60_000.0, 10_000.0)]),
        )])
    };
    let mut fx = mk().filled();
    lease(&fx.acquire("k", 6000, 0, 0, 0));
    let snaps = fx.e.take_dirty(fx.now(0));
    assert_eq!(snaps.len(), 1);
    assert_eq!(snaps[0].buckets[0].bucket.level, 4000.0);
    assert!(
        fx.e.take_dirty(fx.now(0)).is_empty(),
        "nothing changed since"
    );
    let cd =
        fx.e.cooldown("k", Duration::from_secs(60), "x", fx.now(0))
            .expect("cooldown");
    let cooldowns = fx.e.take_cooldowns(fx.now(0)).expect("changed");
    assert_eq!(cooldowns[0].until_unix_ms, cd);
    assert!(fx.e.take_cooldowns(fx.now(0)).is_none());

    // Restart 2 s later (1 token per ms): 4000 + 2000.
    let mut fx2 = mk();
    let later = at(fx2.base, 2000);
    let empty = fx2.e.restore(&snaps, &cooldowns, later);
    assert!(empty.is_empty());
    assert_eq!(fx2.level("k", Dimension::Tokens, 2000), 6000.0);
    assert_eq!(
        fx2.key_status("k", 2000).cooldown_remaining,
        Duration::from_secs(58)
    );

    // No snapshot: buckets stay empty, and the restore says so.
    let mut fx3 = mk();
    assert_eq!(fx3.e.restore(&[], &[], fx3.now(0)), vec!["k".to_string()]);
    assert_eq!(fx3.level("k", Dimension::Tokens, 0), 0.0);
}

#[test]
fn after_an_unclean_stop_buckets_count_as_spent_at_the_crash_and_debt_stays() {
    let mk = || {
        Fx::new(vec![(
            "k",
            limits(vec![rate(Dimension::Tokens, 60_000.0, 10_000.0)]),
        )])
    };
    let mut fx = mk().filled();
    lease(&fx.acquire("k", 6000, 0, 0, 0));
    let mut snaps = fx.e.take_dirty(fx.now(0));
    let mut debt = snaps[0].clone();
    debt.buckets[0].bucket.level = -500.0;
    // Crashed 1.5 s after the snapshot, restarted 2 s after it (1 token per ms).
    let crash = T0_UNIX + 1500;
    snaps[0].assume_spent_until(crash);
    debt.assume_spent_until(crash);
    assert_eq!(debt.buckets[0].bucket.level, -500.0, "debt is kept");
    let mut fx2 = mk();
    fx2.e.restore(&snaps, &[], at(fx2.base, 2000));
    assert_eq!(
        fx2.level("k", Dimension::Tokens, 2000),
        500.0,
        "only the refill since the crash, not the 4000 saved"
    );
    let mut fx3 = mk();
    fx3.e.restore(&[debt], &[], at(fx3.base, 2000));
    assert_eq!(fx3.level("k", Dimension::Tokens, 2000), 0.0);
}

#[test]
fn runtime_limits_survive_a_restore() {
    let mut fx = Fx::new(vec![]);
    let id = lease(&fx.acquire("o/m", 0, 0, 0, 0));
    let h = [
        ("x-ratelimit-limit-tokens", "60000"),
        ("x-ratelimit-remaining-tokens", "30000"),
    ];
    fx.e.report(&id, &with_headers(200, &h, T0_UNIX), fx.now(0))
        .expect("report");
    let snaps = fx.e.take_dirty(fx.now(0));
    let mut fx2 = Fx::new(vec![]);
    fx2.e.restore(&snaps, &[], at(fx2.base, 1000));
    assert_eq!(fx2.level("o/m", Dimension::Tokens, 1000), 31000.0);
}

#[test]
fn bad_input_is_refused_with_a_message_that_names_it() {
    let mut fx = Fx::new(vec![]);
    let bad = |r: AcquireRequest| r;
    let cases = vec![
        (
            bad(AcquireRequest {
                key: "".into(),
                ..Default::default()
            }),
            "empty",
        ),
        (
            bad(AcquireRequest {
                key: "x".repeat(257),
                ..Default::default()
            }),
            "257 bytes",
        ),
        (
            bad(AcquireRequest {
                key: "a\nb".into(),
                ..Default::default()
            }),
            "control",
        ),
        (
            bad(AcquireRequest {
                key: "a//b".into(),
                ..Default::default()
            }),
            "empty segment",
        ),
        (
            bad(AcquireRequest {
                key: "k".into(),
                input_tokens: -1,
                ..Default::default()
            }),
            "input_tokens = -1",
        ),
        (
            bad(AcquireRequest {
                key: "k".into(),
                output_tokens: 2_000_000_000,
                ..Default::default()
            }),
            "output_tokens",
        ),
        (
            bad(AcquireRequest {
                key: "k".into(),
                requests: -5,
                ..Default::default()
            }),
            "requests",
        ),
        (
            bad(AcquireRequest {
                key: "k".into(),
                max_wait: Duration::from_secs(3601),
                ..Default::default()
            }),
            "1 hour",
        ),
    ];
    for (req, needle) in cases {
        match fx.e.acquire(&req, fx.now(0)) {
            Err(EngineError::InvalidArgument(m)) => {
                assert!(m.contains(needle), "{m:?} lacks {needle:?}")
            }
            other => panic!("{needle}: {other:?}"),
        }
    }
    assert!(matches!(
        fx.e.cooldown("k", Duration::ZERO, "", fx.now(0)),
        Err(EngineError::InvalidArgument(_))
    ));
    assert!(matches!(
        fx.e.report("nope", &ok(200), fx.now(0)),
        Err(EngineError::UnknownLease(_))
    ));
    assert!(matches!(
        fx.e.report("00000000000000ff", &ok(200), fx.now(0)),
        Err(EngineError::UnknownLease(_))
    ));
}

#[test]
fn the_daemons_own_bounds_are_enforced() {
    let cfg = EngineConfig {
        max_keys: 2,
        max_waiters: 1,
        max_leases: 2,
        ..EngineConfig::default()
    };
    let l = KeyLimits {
        max_concurrency: Some(1),
        ..KeyLimits::default()
    };
    let mut fx = Fx::with_config(cfg, vec![("k", l)]);
    lease(&fx.acquire("k", 0, 0, 0, 0));
    waiter(&fx.acquire("k", 0, 0, 1000, 0));
    let err = fx.e.acquire(
        &AcquireRequest {
            key: "k".into(),
            max_wait: Duration::from_secs(1),
            ..Default::default()
        },
        fx.now(0),
    );
    assert!(
        matches!(
            err,
            Err(EngineError::Exhausted {
                what: "waiters",
                ..
            })
        ),
        "{err:?}"
    );
    lease(&fx.acquire("other", 0, 0, 0, 0));
    let err = fx.e.acquire(
        &AcquireRequest {
            key: "third".into(),
            ..Default::default()
        },
        fx.now(0),
    );
    assert!(
        matches!(err, Err(EngineError::Exhausted { what: "keys", .. })),
        "{err:?}"
    );
    let err = fx.e.acquire(
        &AcquireRequest {
            key: "other".into(),
            ..Default::default()
        },
        fx.now(0),
    );
    assert!(
        matches!(err, Err(EngineError::Exhausted { what: "leases", .. })),
        "{err:?}"
    );
}

#[test]
fn advice_for_each_kind_of_answer() {
    let mut fx = Fx::new(vec![("k", KeyLimits::default())]);
    let mut t = 0;
    let mut report = |o: Outcome| {
        // Far enough apart that no cooldown from the last answer is still running.
        t += 1_000_000;
        let id = lease(&fx.acquire("k", 0, 0, 0, t));
        fx.e.report(&id, &o, fx.now(t)).expect("report")
    };
    assert_eq!(report(ok(200)).action, Action::Done);
    assert_eq!(report(ok(400)).action, Action::GiveUp);
    let mut q = ok(429);
    q.error_type = "insufficient_quota".into();
    let a = report(q);
    assert_eq!(a.action, Action::GiveUp);
    assert!(a.reason.contains("insufficient_quota"));
    let a = report(ok(503));
    assert_eq!(a.action, Action::Retry);
    // The batch profile's first backoff is drawn from [0, 1 s].
    assert!(a.retry_after <= Duration::from_secs(1));
    let mut s = ok(200);
    s.error_type = "overloaded_error".into();
    s.stream_started = true;
    assert_eq!(report(s).action, Action::GiveUp);
    let mut last = ok(500);
    last.attempt = 8;
    assert_eq!(report(last).action, Action::GiveUp);
    let mut no = with_headers(529, &[("x-should-retry", "false")], T0_UNIX);
    no.attempt = 1;
    assert_eq!(report(no).action, Action::GiveUp);
}

#[test]
fn an_abandoned_lease_gives_everything_back() {
    let mut fx = rpm600_burst10();
    let id = lease(&fx.acquire("k", 0, 0, 0, 0));
    assert_eq!(fx.level("k", Dimension::Requests, 0), 9.0);
    fx.e.abandon(&id, fx.now(0));
    assert_eq!(fx.level("k", Dimension::Requests, 0), 10.0);
    assert_eq!(fx.e.lease_count(), 0);
}

#[test]
fn stopping_answers_every_waiter() {
    let mut fx = rpm600_burst10();
    for _ in 0..10 {
        lease(&fx.acquire("k", 0, 0, 0, 0));
    }
    let w = waiter(&fx.acquire("k", 0, 0, 5000, 0));
    fx.e.cancel_all("daemon stopping", fx.now(1));
    let answers = fx.e.drain_answers();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].0, w);
    assert!(
        matches!(&answers[0].1, WaiterAnswer::NotGranted(r) if r.reason == "daemon stopping" && r.code == RefusalCode::Stopping)
    );
    assert_eq!(fx.e.waiting(), 0);
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

#[test]
fn events_tell_what_happened_and_counters_follow_the_advice() {
    let mut fx = Fx::new(vec![("k", KeyLimits::default())]);
    let a = lease(&fx.acquire("k", 0, 0, 0, 0));
    fx.e.report(
        &a,
        &with_headers(429, &[("retry-after", "3")], T0_UNIX),
        fx.now(0),
    )
    .expect("report");
    let b = lease(&fx.acquire("k", 0, 0, 0, 10_000));
    fx.e.report(&b, &ok(401), fx.now(10_000)).expect("report");
    let ev = fx.e.recent_events(10);
    assert_eq!(
        ev.iter().map(|e| e.kind).collect::<Vec<_>>(),
        vec![
            EventKind::Cooldown,
            EventKind::Calibrated,
            EventKind::GiveUp
        ]
    );
    assert!(
        ev[0].message.contains("3.0 s") && ev[0].message.contains("429"),
        "{}",
        ev[0].message
    );
    assert_eq!((ev[0].key.as_str(), ev[0].unix_ms), ("k", T0_UNIX));
    // A key nothing limited was probing from 240/min: the refusal halves it.
    assert!(
        ev[1]
            .message
            .starts_with("requests limit lowered from 240 to 120/minute"),
        "{}",
        ev[1].message
    );
    let st = fx.key_status("k", 10_000);
    assert_eq!((st.retries_total, st.give_ups_total), (1, 1));
    for i in 0..(EVENTS_KEPT as u64 + 5) {
        fx.e.cooldown("k", Duration::from_millis(1000 + i), "", fx.now(20_000))
            .expect("cooldown");
    }
    assert_eq!(fx.e.recent_events(1000).len(), EVENTS_KEPT);
}

#[test]
fn a_waiter_held_only_by_concurrency_asks_for_no_wakeup() {
    let l = KeyLimits {
        rates: vec![rate(Dimension::Requests, 600.0, 10.0)],
        max_concurrency: Some(1),
        ..KeyLimits::default()
    };
    let mut fx = Fx::new(vec![("k", l)]).filled();
    let a = lease(&fx.acquire("k", 0, 0, 0, 0));
    waiter(&fx.acquire("k", 0, 0, 5000, 0));
    // Its bucket has plenty: only a report can let it go, so the clock must not spin on it.
    assert_eq!(
        fx.e.next_wakeup(fx.now(10)),
        Some(fx.base + Duration::from_secs(600)),
        "only the lease's expiry"
    );
    fx.e.report(&a, &ok(200), fx.now(20)).expect("report");
    assert_eq!(fx.e.drain_answers().len(), 1);
}

#[test]
fn a_probe_whose_client_died_lets_the_next_request_probe() {
    let roomy = limits(vec![rate(Dimension::Requests, 6_000_000.0, 100_000.0)]);
    let mut fx = Fx::new(vec![("p", roomy)]).filled();
    let a = lease(&fx.acquire("p", 0, 0, 0, 0));
    fx.e.report(&a, &with_headers(429, &[], T0_UNIX), fx.now(0))
        .expect("report");
    let req = AcquireRequest {
        key: "p".into(),
        client_id: "c1".into(),
        ..Default::default()
    };
    lease(&fx.acquire_req(req, 1001));
    assert!(
        matches!(fx.acquire("p", 0, 0, 0, 1002), Acquired::NotGranted(_)),
        "the probe is out"
    );
    fx.e.release_client("c1", fx.now(1003));
    lease(&fx.acquire("p", 0, 0, 0, 1004));
}

#[test]
fn a_success_without_usage_is_settled_at_its_estimate() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Tokens, 60_000.0, 10_000.0)]),
    )])
    .filled();
    let id = lease(&fx.acquire("k", 500, 500, 0, 0));
    let mut o = ok(200);
    o.usage_known = false;
    fx.e.report(&id, &o, fx.now(0)).expect("report");
    assert_eq!(
        fx.level("k", Dimension::Tokens, 0),
        9000.0,
        "no refund without usage"
    );
    // A refused request used no tokens.
    let id = lease(&fx.acquire("k", 500, 500, 0, 0));
    fx.e.report(&id, &failed_status(503), fx.now(0))
        .expect("report");
    assert_eq!(fx.level("k", Dimension::Tokens, 0), 9000.0);
}

fn failed_status(status: u16) -> Outcome {
    Outcome {
        status,
        attempt: 1,
        ..Outcome::default()
    }
}

#[test]
fn an_abandoned_grant_on_a_reserved_output_key_gives_max_tokens_back() {
    let mut l = limits(vec![rate(Dimension::OutputTokens, 60_000.0, 10_000.0)]);
    l.output_counted_as = Some(OutputCounting::Reserved);
    let mut fx = Fx::new(vec![("k", l)]).filled();
    let id = lease(&fx.acquire("k", 0, 4000, 0, 0));
    fx.e.abandon(&id, fx.now(0));
    assert_eq!(fx.level("k", Dimension::OutputTokens, 0), 10_000.0);
}
