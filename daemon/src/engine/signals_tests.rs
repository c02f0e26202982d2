//! What the provider says, on a fake clock: 429s and cooldowns, probes after them, limits read
//! from headers, advice for each kind of answer, and the events and counters that follow.

use super::tests::*;
use super::*;

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
    // A key nothing limited was probing from its first contact's rate: the refusal halves it.
    let start = bucket::aimd::START_PER_SEC * 60.0;
    assert!(
        ev[1].message.starts_with(&format!(
            "requests limit lowered from {start:.0} to {:.0}/minute",
            start / 2.0
        )),
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
