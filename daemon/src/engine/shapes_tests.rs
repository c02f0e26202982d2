//! Real traffic on a fake clock: requests without max_tokens, servers that limit what is in
//! flight, daily quotas, fixed windows, and a header-less herd's first refusal.

use super::tests::*;
use super::*;

fn undeclared(key: &str, input: i64, output: i64, max_wait_ms: u64) -> AcquireRequest {
    AcquireRequest {
        key: key.into(),
        input_tokens: input,
        output_tokens: output,
        output_tokens_declared: Some(false),
        max_wait: Duration::from_millis(max_wait_ms),
        ..AcquireRequest::default()
    }
}

fn used(output: u64) -> Outcome {
    Outcome {
        output_tokens: output,
        input_tokens: 100,
        ..ok(200)
    }
}

fn reserved(a: &Acquired) -> u64 {
    match a {
        Acquired::Granted(g) => g.reserved_tokens,
        other => panic!("expected a grant, got {other:?}"),
    }
}

#[test]
fn undeclared_output_reserves_what_answers_produced_and_settles_at_it() {
    // OpenAI-style: output counted as reserved; a big tokens bucket so nothing waits.
    let mut l = limits(vec![rate(Dimension::Tokens, 6_000_000.0, 1_000_000.0)]);
    l.output_counted_as = Some(OutputCounting::Reserved);
    let mut fx = Fx::new(vec![("k", l)]).filled();
    // Before any answer: the caller's own figure (its default), at most a bounded guess.
    let first = fx.acquire_req(undeclared("k", 100, 4096, 0), 0);
    assert_eq!(reserved(&first), 100 + output::FIRST_UNDECLARED_OUTPUT);
    let small = fx.acquire_req(undeclared("k", 100, 300, 0), 0);
    assert_eq!(
        reserved(&small),
        100 + 300,
        "a smaller figure of the caller's stands"
    );
    fx.e.report(&lease(&small), &used(150), fx.now(0))
        .expect("report");
    let before = fx.level("k", Dimension::Tokens, 0);
    fx.e.report(&lease(&first), &used(150), fx.now(0))
        .expect("report");
    // Settled at what was produced, not at what was reserved (nothing was declared).
    let guess = output::FIRST_UNDECLARED_OUTPUT as f64;
    assert_eq!(fx.level("k", Dimension::Tokens, 0), before + guess - 150.0);
    for i in 1..30u64 {
        let a = fx.acquire_req(undeclared("k", 100, 4096, 0), i);
        fx.e.report(&lease(&a), &used(100 + i * 5), fx.now(i))
            .expect("report");
    }
    let st = fx.key_status("k", 40);
    let estimate = st.output_tokens_estimate.expect("an estimate");
    assert!((230..=250).contains(&estimate), "{estimate}");
    let a = fx.acquire_req(undeclared("k", 100, 4096, 0), 41);
    assert_eq!(reserved(&a), 100 + estimate);
    fx.e.report(&lease(&a), &used(200), fx.now(41))
        .expect("report");
    // Reserved against used for undeclared requests that reserved the estimate (the first,
    // at the default, is left out): well within 1.5x.
    let st = fx.key_status("k", 42);
    let (r, u) = (st.undeclared_tokens_reserved, st.undeclared_tokens_used);
    assert!(
        r > 0 && (r as f64) < 1.5 * u as f64,
        "reserved {r} used {u}"
    );
    // A declared request is still charged at its max_tokens on this key.
    let d = fx.acquire("k", 100, 500, 0, 50);
    let before = fx.level("k", Dimension::Tokens, 50);
    fx.e.report(&lease(&d), &used(150), fx.now(50))
        .expect("report");
    assert_eq!(fx.level("k", Dimension::Tokens, 50), before);
}

#[test]
fn older_clients_that_send_no_flag_are_declared() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Tokens, 6_000_000.0, 1_000_000.0)]),
    )])
    .filled();
    let a = fx.acquire("k", 10, 10, 0, 0);
    fx.e.report(&lease(&a), &used(5), fx.now(0))
        .expect("report");
    assert_eq!(reserved(&fx.acquire("k", 10, 4096, 0, 1)), 4106);
}

pub(super) fn refused_for_concurrency() -> Outcome {
    Outcome {
        status: 429,
        attempt: 1,
        error_message: "Max parallel request limit reached".into(),
        ..Outcome::default()
    }
}

#[test]
fn a_refusal_for_requests_in_flight_teaches_concurrency_not_a_rate() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 60_000.0, 1000.0)]),
    )])
    .filled();
    let leases: Vec<String> = (0..9)
        .map(|_| lease(&fx.acquire("k", 0, 0, 0, 0)))
        .collect();
    // The ninth in flight was refused.
    fx.e.report(&leases[8], &refused_for_concurrency(), fx.now(10))
        .expect("report");
    let st = fx.key_status("k", 10);
    assert_eq!(st.max_concurrency, 8);
    assert_eq!(st.concurrency_source, Some(LimitSource::Aimd));
    assert_eq!(st.learned_concurrency, Some(8));
    assert_eq!(
        st.cooldown_remaining,
        Duration::ZERO,
        "no cooldown without a delay"
    );
    let b = &st.buckets[0];
    assert_eq!(b.bucket.limit, 60_000.0, "the rate is not cut");
    // Eight are in flight: the next waits for a slot, and goes when one is reported.
    let w = waiter(&fx.acquire("k", 0, 0, 10_000, 20));
    fx.e.report(&leases[0], &ok(200), fx.now(30))
        .expect("report");
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![w]);
}

#[test]
fn learned_concurrency_never_rises_above_the_configured_one() {
    let l = KeyLimits {
        max_concurrency: Some(4),
        ..limits(vec![rate(Dimension::Requests, 60_000.0, 1000.0)])
    };
    let mut fx = Fx::new(vec![("k", l)]).filled();
    let leases: Vec<String> = (0..4)
        .map(|_| lease(&fx.acquire("k", 0, 0, 0, 0)))
        .collect();
    fx.e.report(&leases[3], &refused_for_concurrency(), fx.now(10))
        .expect("report");
    assert_eq!(fx.key_status("k", 10).max_concurrency, 3);
    // Demand and no refusal: it climbs back, but only to the configured 4.
    let mut t = 20;
    let mut held: Vec<String> = leases[..3].to_vec();
    for _ in 0..200 {
        while let Acquired::Granted(g) = fx.acquire("k", 0, 0, 0, t) {
            held.push(g.lease_id);
        }
        for l in held.drain(..) {
            fx.e.report(&l, &ok(200), fx.now(t + 100)).expect("report");
        }
        t += 1000;
    }
    let st = fx.key_status("k", t);
    assert_eq!(st.max_concurrency, 4);
    assert_eq!(st.concurrency_source, Some(LimitSource::Config));
    // Demand the configured bound held back did not raise what was learned past it.
    assert!(st.learned_concurrency.is_some_and(|c| c <= 4), "{st:?}");
}

fn daily_429(message: &str, error_type: &str) -> Outcome {
    Outcome {
        status: 429,
        attempt: 1,
        error_type: error_type.into(),
        error_message: message.into(),
        signals: ProviderSignals::parse([], message, T0_UNIX),
        ..Outcome::default()
    }
}

const RPD: &str = "Rate limit reached for gpt-x in organization org-1 on requests per day (RPD): Limit 100, Used 100, Requested 1. Please try again in 7h12m0s.";

#[test]
fn a_daily_quota_answers_every_acquire_at_once_until_its_reset() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 600.0, 2.0)]),
    )])
    .filled();
    let a = lease(&fx.acquire("k", 0, 0, 0, 0));
    let b = lease(&fx.acquire("k", 0, 0, 0, 0));
    // Two waiting for capacity, with long waits.
    let w1 = waiter(&fx.acquire("k", 0, 0, 600_000, 1));
    let w2 = waiter(&fx.acquire("k", 0, 0, 600_000, 1));
    let advice =
        fx.e.report(&a, &daily_429(RPD, "rate_limit_exceeded"), fx.now(5))
            .expect("report");
    assert_eq!(advice.action, Action::GiveUp, "{advice:?}");
    // Both waiters are answered at once: DAILY_QUOTA, not before the reset.
    let answers = fx.e.drain_answers();
    assert_eq!(answers.len(), 2);
    let reset = T0_UNIX + 5 + 25_920_000;
    for (w, ans) in answers {
        assert!(w == w1 || w == w2);
        match ans {
            WaiterAnswer::NotGranted(r) => {
                assert_eq!(r.code, RefusalCode::DailyQuota);
                assert_eq!(r.not_before_unix_ms, reset);
            }
            other => panic!("{other:?}"),
        }
    }
    // A new Acquire with an hour to wait is answered at once too.
    match fx.acquire("k", 0, 0, 3_600_000, 10) {
        Acquired::NotGranted(r) => assert_eq!(r.code, RefusalCode::DailyQuota),
        other => panic!("{other:?}"),
    }
    // The minute's rate was not cut, and status says what is spent until when.
    let st = fx.key_status("k", 10);
    assert_eq!(st.buckets[0].bucket.limit, 600.0);
    assert_eq!(
        st.daily_quota,
        Some((reset, "requests per day".to_string()))
    );
    assert!(st
        .cooldown_reason
        .starts_with("daily quota exhausted (requests per day) until"));
    // The one still in flight is advised to give up as well.
    let advice =
        fx.e.report(&b, &daily_429(RPD, "rate_limit_exceeded"), fx.now(20))
            .expect("report");
    assert_eq!(advice.action, Action::GiveUp);
    // After the reset (the last refusal, at 20 ms, said it again), it serves again.
    let after = 20 + 25_920_000 + 10;
    lease(&fx.acquire("k", 0, 0, 1000, after));
}

#[test]
fn a_daily_quota_falls_back_where_a_route_group_has_another_member() {
    let config = EngineConfig {
        route_groups: vec![RouteGroup {
            name: "g".into(),
            members: vec![
                RouteMember {
                    key: "a".into(),
                    when: Vec::new(),
                },
                RouteMember {
                    key: "b".into(),
                    when: Vec::new(),
                },
            ],
        }],
        ..EngineConfig::default()
    };
    let l = || limits(vec![rate(Dimension::Requests, 600.0, 10.0)]);
    let mut fx = Fx::with_config(config, vec![("a", l()), ("b", l())]).filled();
    let req = AcquireRequest {
        route_group: "g".into(),
        ..AcquireRequest::default()
    };
    let g = match fx.acquire_req(req.clone(), 0) {
        Acquired::Granted(g) => g,
        other => panic!("{other:?}"),
    };
    assert_eq!(g.key, "a");
    let gemini = "You exceeded your current quota. [quotaId=GenerateRequestsPerDayPerProjectPerModel-FreeTier; retryDelay=20s]";
    let advice =
        fx.e.report(
            &g.lease_id,
            &daily_429(gemini, "RESOURCE_EXHAUSTED"),
            fx.now(1),
        )
        .expect("report");
    assert_eq!(advice.action, Action::Fallback, "{advice:?}");
    assert_eq!(advice.fallback_key, "b");
    // Gemini's daily quota lasts until midnight Pacific time, not its retryDelay of 20 s.
    let st = fx.key_status("a", 2);
    assert!(st.cooldown_remaining > Duration::from_secs(3600), "{st:?}");
    match fx.acquire_req(req, 30_000) {
        Acquired::Granted(g) => assert_eq!(g.key, "b"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_fixed_windows_fresh_window_is_used_at_once() {
    // No config: the upstream says only remaining and reset of its 5 s windows of 100.
    let mut fx = Fx::new(Vec::new());
    let window = |rem: u32, reset_ms: u64| {
        with_headers(
            200,
            &[
                ("x-ratelimit-remaining-requests", &rem.to_string()),
                ("x-ratelimit-reset-requests", &format!("{reset_ms}ms")),
            ],
            T0_UNIX,
        )
    };
    // The first window spent at 10 a tick, every 50 ms.
    let mut remaining = 100u32;
    let mut t = 0;
    while remaining > 0 {
        let mut held = Vec::new();
        while let Acquired::Granted(g) = fx.acquire("w", 0, 0, 0, t) {
            held.push(g.lease_id);
            if held.len() == 10 {
                break;
            }
        }
        for l in held {
            remaining = remaining.saturating_sub(1);
            fx.e.report(&l, &window(remaining, 5000 - t), fx.now(t))
                .expect("report");
        }
        t += 50;
        if t >= 5000 {
            break;
        }
    }
    // The next window: the first answer in it shows remaining back near 100, reset near 5 s.
    t = 5010;
    let probe = loop {
        if let Acquired::Granted(g) = fx.acquire("w", 0, 0, 0, t) {
            break g.lease_id;
        }
        t += 10;
    };
    fx.e.report(&probe, &window(99, 4990 - (t - 5010)), fx.now(t))
        .expect("report");
    let st = fx.key_status("w", t);
    assert!(st.fixed_window.is_some(), "{st:?}");
    // The rest of the window's allowance goes at once.
    let mut granted = 0;
    while let Acquired::Granted(_) = fx.acquire("w", 0, 0, 0, t) {
        granted += 1;
    }
    assert!(granted >= 95, "{granted}");
}

#[test]
fn a_header_less_refusal_without_a_delay_cools_a_probed_key_briefly() {
    // A key nothing configures, on first contact, refused with no Retry-After.
    let mut fx = Fx::new(Vec::new());
    let a = lease(&fx.acquire("h", 0, 0, 0, 0));
    let r = Outcome {
        status: 429,
        attempt: 1,
        ..Outcome::default()
    };
    fx.e.report(&a, &r, fx.now(300)).expect("report");
    // Until the run of requests it accepted (from the grant at 0) has left a window of a
    // second: 700 ms, not cooldown_base's whole second after the refusal.
    let cooling = fx.key_status("h", 300).cooldown_remaining;
    assert_eq!(cooling, Duration::from_millis(700));
    // The next run begins with the next grant; a refusal long after it cools for the least.
    let mut t = 1001;
    let b = loop {
        if let Acquired::Granted(g) = fx.acquire("h", 0, 0, 0, t) {
            break g.lease_id;
        }
        t += 10;
    };
    fx.e.report(&b, &ok(200), fx.now(t)).expect("report");
    let mut last = String::new();
    for _ in 0..100 {
        t += 20;
        if let Acquired::Granted(g) = fx.acquire("h", 0, 0, 0, t) {
            last = g.lease_id;
            if t > 2600 {
                break;
            }
            fx.e.report(&last, &ok(200), fx.now(t)).expect("report");
        }
    }
    assert!(t > 2600, "kept granting");
    fx.e.report(&last, &r, fx.now(t)).expect("report");
    let cooling = fx.key_status("h", t).cooldown_remaining;
    assert!(cooling >= super::report::PROBED_BACKOFF_MIN, "{cooling:?}");
    assert!(cooling < Duration::from_secs(1), "{cooling:?}");
    // A configured key keeps cooldown_base.
    let mut fx = Fx::new(vec![(
        "c",
        limits(vec![rate(Dimension::Requests, 600.0, 10.0)]),
    )])
    .filled();
    let c = lease(&fx.acquire("c", 0, 0, 0, 0));
    fx.e.report(&c, &r, fx.now(300)).expect("report");
    assert_eq!(
        fx.key_status("c", 300).cooldown_remaining,
        Duration::from_secs(1)
    );
}

#[test]
fn a_minute_refusal_after_a_daily_quota_ended_is_a_cooldown_not_a_daily_quota() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 600.0, 2.0)]),
    )])
    .filled();
    let a = lease(&fx.acquire("k", 0, 0, 0, 0));
    let short =
        "Rate limit reached on requests per day (RPD): Limit 1, Used 1. Please try again in 2s.";
    fx.e.report(&a, &daily_429(short, "rate_limit_exceeded"), fx.now(0))
        .expect("report");
    // The day's quota is back 2 s later; the probe is refused for the minute's limit.
    let probe = lease(&fx.acquire("k", 0, 0, 0, 2100));
    let minute = Outcome {
        status: 429,
        attempt: 1,
        signals: ProviderSignals::parse([("retry-after", "5")], "", T0_UNIX),
        ..Outcome::default()
    };
    fx.e.report(&probe, &minute, fx.now(2100)).expect("report");
    match fx.acquire("k", 0, 0, 0, 2200) {
        Acquired::NotGranted(r) => assert_eq!(r.code, RefusalCode::Cooldown, "{r:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(fx.key_status("k", 2200).daily_quota, None);
}
