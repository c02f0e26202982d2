//! What one misbehaving client must not be able to do to the engine: guess or settle another's
//! lease, wedge a key with one report, grow the expiry heap without bound.

use super::tests::*;
use super::*;

#[test]
fn a_lease_id_cannot_be_guessed_from_another() {
    let mut fx = Fx::new(vec![]);
    let a = lease(&fx.acquire("k", 0, 0, 0, 0));
    let b = lease(&fx.acquire("k", 0, 0, 0, 0));
    assert_eq!(a.len(), 32);
    // The next number with the tag of the one seen, or the number alone, are unknown.
    let forged = format!("{}{}", &b[..16], &a[16..]);
    for id in [forged.as_str(), &b[..16], "zz", ""] {
        assert!(
            matches!(
                fx.e.report(id, &ok(200), fx.now(1)),
                Err(EngineError::UnknownLease(_))
            ),
            "{id}"
        );
    }
    // Another engine (another daemon, or the same after a restart) with its own secret.
    let mut other = Fx::new(vec![]);
    other.e.set_lease_secret([1, 2]);
    assert!(other.e.report(&a, &ok(200), other.now(1)).is_err());
    fx.e.report(&b, &ok(200), fx.now(1)).expect("the real id");
}

#[test]
fn only_the_user_that_acquired_a_lease_may_report_it() {
    let mut fx = Fx::new(vec![]);
    let id = lease(&fx.acquire_req(
        AcquireRequest {
            key: "k".into(),
            uid: Some(1000),
            ..AcquireRequest::default()
        },
        0,
    ));
    assert!(matches!(
        fx.e.check_reporter(&id, Some(1001)),
        Err(EngineError::PermissionDenied(_))
    ));
    assert_eq!(fx.e.check_reporter(&id, Some(1000)), Ok(()));
    assert_eq!(fx.e.check_reporter(&id, None), Ok(()));
}

#[test]
fn settled_leases_do_not_stay_in_the_expiry_heap() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 1e9, 1e9)]),
    )])
    .filled();
    for i in 0..20_000u64 {
        let id = lease(&fx.acquire("k", 0, 0, 0, i / 100));
        fx.e.report(&id, &ok(200), fx.now(i / 100)).expect("report");
    }
    assert!(
        fx.e.expiries.len() <= 2 * fx.e.leases.len() + 1025,
        "{} expiry entries for {} live leases",
        fx.e.expiries.len(),
        fx.e.leases.len()
    );
    // Live leases still expire.
    let live = lease(&fx.acquire("k", 0, 0, 0, 300));
    let ttl = fx.e.config.lease_ttl.as_millis() as u64;
    assert_eq!(fx.e.expire(fx.now(300 + ttl)), 1);
    assert!(fx.e.report(&live, &ok(200), fx.now(301 + ttl)).is_err());
}

#[test]
fn one_absurd_usage_report_costs_at_most_one_bucket_of_debt() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Tokens, 2_000_000.0, 2_000_000.0)]),
    )])
    .filled();
    let id = lease(&fx.acquire("k", 1000, 0, 0, 0));
    let mut o = ok(200);
    o.input_tokens = 1_000_000_000;
    fx.e.report(&id, &o, fx.now(0)).expect("report");
    let level = fx.level("k", Dimension::Tokens, 0);
    assert!(
        level >= -2_000_000.0 * reset_debt_bound(),
        "debt of {level} after one report"
    );
    // A minute to be out of debt, not 16.7 h.
    match fx.acquire("k", 1000, 0, 0, 0) {
        Acquired::NotGranted(r) => assert!(
            r.not_before_unix_ms - T0_UNIX <= 61_000,
            "{}",
            r.not_before_unix_ms - T0_UNIX
        ),
        other => panic!("{other:?}"),
    }
}

fn reset_debt_bound() -> f64 {
    bucket::MAX_DEBT_BUCKETS
}

#[test]
fn absurd_limit_headers_never_wedge_a_key() {
    let mut fx = Fx::new(vec![]);
    for (key, name, value) in [
        ("a", "anthropic-ratelimit-output-tokens-limit", "0.5"),
        ("b", "x-ratelimit-limit-requests", "1e-9"),
        ("c", "x-ratelimit-limit-tokens", "0"),
    ] {
        let id = lease(&fx.acquire(key, 0, 10, 0, 0));
        fx.e.report(
            &id,
            &with_headers(200, &[(name, value)], T0_UNIX),
            fx.now(0),
        )
        .expect("report");
        let next = fx.e.acquire(
            &AcquireRequest {
                key: key.into(),
                output_tokens: 10,
                max_wait: Duration::from_secs(5),
                ..AcquireRequest::default()
            },
            fx.now(0),
        );
        assert!(next.is_ok(), "{name}: {value} wedged the key: {next:?}");
    }
}

#[test]
fn reset_forgets_learned_limits_debt_cooldown_and_breaker() {
    let mut fx = Fx::new(vec![(
        "c",
        limits(vec![rate(Dimension::Tokens, 60_000.0, 60_000.0)]),
    )])
    .filled();
    let id = lease(&fx.acquire("c", 1000, 0, 0, 0));
    let h = [
        ("x-ratelimit-limit-requests", "2"),
        ("x-ratelimit-remaining-requests", "0"),
    ];
    let mut o = with_headers(200, &h, T0_UNIX);
    o.usage_known = true;
    o.input_tokens = 200_000;
    fx.e.report(&id, &o, fx.now(0)).expect("report");
    fx.e.cooldown("c", Duration::from_secs(600), "stuck", fx.now(0))
        .expect("cooldown");
    let before = fx.key_status("c", 0);
    assert!(before.buckets.len() == 2 && before.cooldown_remaining > Duration::ZERO);
    let s = fx.e.reset("c", fx.now(0)).expect("reset");
    assert_eq!(s.learned_limits, 1);
    assert!(s.debt > 0.0 && s.cooldown);
    let after = fx.key_status("c", 0);
    assert_eq!(after.buckets.len(), 1, "the configured bucket stays");
    assert_eq!(after.buckets[0].bucket.level, 0.0);
    assert_eq!(after.cooldown_remaining, Duration::ZERO);
    assert!(matches!(
        fx.e.reset("unknown", fx.now(0)),
        Err(EngineError::InvalidArgument(_))
    ));
    // Granted again once it refills (1000 per second).
    lease(&fx.acquire("c", 1000, 0, 0, 1000));
}

#[test]
fn a_new_config_keeps_levels_leases_and_learned_limits() {
    let mut fx = Fx::new(vec![
        ("k", limits(vec![rate(Dimension::Requests, 60.0, 10.0)])),
        (
            "gone",
            limits(vec![rate(Dimension::Tokens, 1000.0, 1000.0)]),
        ),
    ])
    .filled();
    let held = lease(&fx.acquire("k", 0, 0, 0, 0));
    let before = fx.level("k", Dimension::Requests, 0);
    let config = fx.e.config().clone();
    let next = vec![
        (
            "k".to_string(),
            limits(vec![rate(Dimension::Requests, 600.0, 20.0)]),
        ),
        (
            "new".to_string(),
            limits(vec![rate(Dimension::Tokens, 500.0, 500.0)]),
        ),
    ];
    fx.e.reconfigure(config.clone(), next, fx.now(0))
        .expect("reconfigure");
    let k = fx.key_status("k", 0);
    assert_eq!(
        (k.buckets[0].bucket.limit, k.buckets[0].bucket.capacity),
        (600.0, 20.0)
    );
    assert_eq!(k.buckets[0].bucket.level, before, "the level is kept");
    assert!(fx.key_status("gone", 0).buckets.is_empty());
    assert_eq!(
        fx.key_status("new", 0).buckets[0].bucket.level,
        0.0,
        "starts empty"
    );
    fx.e.report(&held, &ok(200), fx.now(1))
        .expect("a lease from before is still known");

    // An invalid config changes nothing.
    let bad = vec![(
        "k".to_string(),
        KeyLimits {
            profile: Some("no-such-profile".into()),
            ..limits(vec![rate(Dimension::Requests, 6.0, 1.0)])
        },
    )];
    assert!(fx.e.reconfigure(config, bad, fx.now(2)).is_err());
    assert_eq!(fx.key_status("k", 2).buckets[0].bucket.limit, 600.0);
}

fn small(max_keys: usize, max_leases: usize, max_waiters: usize, max_runs: usize) -> Fx {
    let config = EngineConfig {
        transit_allowance: Duration::ZERO,
        max_keys,
        max_leases,
        max_waiters,
        max_runs,
        ..EngineConfig::default()
    };
    Fx::with_config(
        config,
        vec![("cfg", limits(vec![rate(Dimension::Requests, 1e9, 1e9)]))],
    )
    .filled()
}

#[test]
fn junk_keys_make_room_for_a_new_one_least_recently_used_first() {
    let mut fx = small(10, 1000, 1000, 100);
    // Nine junk keys, each taught a limit by a header (so each has saved state); one of them
    // with a lease in flight.
    let held = lease(&fx.acquire("junk/0", 0, 0, 0, 0));
    for i in 0..9 {
        let key = format!("junk/{i}");
        let id = lease(&fx.acquire(&key, 0, 0, 0, 0));
        let h = [("x-ratelimit-limit-requests", "600")];
        fx.e.report(&id, &with_headers(200, &h, T0_UNIX), fx.now(0))
            .expect("report");
    }
    // One cooling down: neither it nor the one held may go.
    fx.e.cooldown("junk/1", Duration::from_secs(60), "x", fx.now(0))
        .expect("cooldown");
    lease(&fx.acquire("new/a", 0, 0, 0, 1));
    assert_eq!(fx.e.take_evicted(), vec!["junk/2".to_string()]);
    lease(&fx.acquire("new/b", 0, 0, 0, 1));
    assert_eq!(fx.e.take_evicted(), vec!["junk/3".to_string()]);
    let names: Vec<String> = fx.e.status(fx.now(1)).into_iter().map(|k| k.key).collect();
    for kept in ["cfg", "junk/0", "junk/1", "new/a", "new/b"] {
        assert!(names.contains(&kept.to_string()), "{kept} in {names:?}");
    }
    fx.e.report(&held, &ok(200), fx.now(2))
        .expect("the held key's lease");
}

#[test]
fn one_process_holds_at_most_half_the_leases_and_waiters() {
    let mut fx = small(100, 100, 100, 100);
    let from = |pid: u32, key: &str| AcquireRequest {
        key: key.into(),
        pid: Some(pid),
        ..AcquireRequest::default()
    };
    for _ in 0..50 {
        lease(&fx.acquire_req(from(66, "cfg"), 0));
    }
    assert!(matches!(
        fx.e.acquire(&from(66, "cfg"), fx.now(0)),
        Err(EngineError::Exhausted { .. })
    ));
    // Another process goes on.
    for _ in 0..40 {
        lease(&fx.acquire_req(from(77, "cfg"), 0));
    }
}

#[test]
fn finished_runs_make_room_for_new_ones() {
    let mut fx = small(100, 1000, 1000, 10);
    let in_run = |run: &str| AcquireRequest {
        key: "cfg".into(),
        run_id: run.into(),
        ..AcquireRequest::default()
    };
    let mut open = Vec::new();
    for i in 0..10 {
        let id = lease(&fx.acquire_req(in_run(&format!("run-{i}")), i));
        if i == 0 {
            open.push(id);
        } else {
            fx.e.report(&id, &ok(200), fx.now(i)).expect("report");
        }
    }
    // The table is full of runs, one still holding a lease: a new run replaces a finished one.
    lease(&fx.acquire_req(in_run("run-new"), 20));
    let runs: Vec<String> =
        fx.e.runs_status(fx.now(20))
            .into_iter()
            .map(|r| r.run_id)
            .collect();
    assert!(
        runs.contains(&"run-0".to_string()),
        "the busy run stays: {runs:?}"
    );
    assert!(
        !runs.contains(&"run-1".to_string()),
        "the oldest finished run goes: {runs:?}"
    );
}

#[test]
fn a_lease_gives_its_slot_back_to_the_keys_it_was_granted_on_whatever_a_reload_changed() {
    let conc = |n| KeyLimits {
        max_concurrency: Some(n),
        ..KeyLimits::default()
    };
    let mut fx = Fx::new(vec![("a", conc(2))]);
    let config = fx.e.config().clone();
    let held = lease(&fx.acquire("a/b", 0, 0, 0, 0));
    // The ancestor goes, the lease is reported, the ancestor comes back with one slot.
    fx.e.reconfigure(config.clone(), vec![], fx.now(1))
        .expect("reload");
    fx.e.report(&held, &ok(200), fx.now(2)).expect("report");
    fx.e.reconfigure(config, vec![("a".into(), conc(1))], fx.now(3))
        .expect("reload");
    assert_eq!(fx.key_status("a", 3).in_flight, 0, "no slot left taken");
    lease(&fx.acquire("a/b", 0, 0, 0, 4));
}

#[test]
fn an_ancestor_other_keys_are_limited_by_is_not_evicted() {
    let mut fx = small(4, 1000, 1000, 100);
    // "p" learns a limit from headers; "p/c" is limited by it and holds a lease.
    let id = lease(&fx.acquire("p", 0, 0, 0, 0));
    let h = [("x-ratelimit-limit-requests", "6000")];
    fx.e.report(&id, &with_headers(200, &h, T0_UNIX), fx.now(0))
        .expect("report");
    fx.e.fill(fx.now(0));
    lease(&fx.acquire("p/c", 0, 0, 0, 1));
    let other = lease(&fx.acquire("other", 0, 0, 0, 2));
    fx.e.report(&other, &ok(200), fx.now(2)).expect("report");
    // Full (cfg, p, p/c, other): the new key takes the place of "other", not of "p".
    fx.acquire("new", 0, 0, 0, 3);
    assert_eq!(fx.e.take_evicted(), vec!["other".to_string()]);
}

#[test]
fn a_reload_on_a_full_table_adds_its_configured_keys() {
    let mut fx = small(2, 1000, 1000, 100);
    let config = fx.e.config().clone();
    lease(&fx.acquire("busy", 0, 0, 0, 0));
    let next = vec![
        (
            "cfg".to_string(),
            limits(vec![rate(Dimension::Requests, 1e9, 1e9)]),
        ),
        (
            "added".to_string(),
            limits(vec![rate(Dimension::Requests, 60.0, 1.0)]),
        ),
    ];
    fx.e.reconfigure(config, next, fx.now(1))
        .expect("a valid config is applied whole");
    assert_eq!(fx.key_status("added", 1).buckets[0].bucket.limit, 60.0);
}

#[test]
fn restoring_more_keys_than_the_table_holds_evicts_nothing() {
    let mut fx = Fx::new(vec![]);
    for i in 0..5 {
        let id = lease(&fx.acquire(&format!("k{i}"), 0, 0, 0, 0));
        let h = [("x-ratelimit-limit-requests", "600")];
        fx.e.report(&id, &with_headers(200, &h, T0_UNIX), fx.now(0))
            .expect("report");
    }
    let snaps = fx.e.snapshot_all(fx.now(0));
    assert_eq!(snaps.len(), 5);
    let mut small = small(3, 1000, 1000, 100);
    small.e.restore(&snaps, &[], small.now(0));
    assert!(
        small.e.take_evicted().is_empty(),
        "restored state was traded away"
    );
}

#[test]
fn clients_that_went_quiet_are_forgotten_and_rates_are_over_ten_seconds() {
    let mut fx = small(100, 1000, 1000, 100);
    let from = |client: &str| AcquireRequest {
        key: "cfg".into(),
        client_id: client.into(),
        ..AcquireRequest::default()
    };
    let id = lease(&fx.acquire_req(from("gone"), 0));
    fx.e.report(&id, &ok(200), fx.now(0)).expect("report");
    lease(&fx.acquire_req(from("busy"), 0));
    let now = fx.now(10);
    let rates: Vec<(String, f64)> =
        fx.e.clients_status(now)
            .into_iter()
            .map(|c| (c.id, c.requests_per_second))
            .collect();
    assert!(
        rates.iter().all(|(_, r)| *r <= 0.1),
        "one grant is 0.1/s over 10 s: {rates:?}"
    );
    // Sixteen minutes later the one with nothing held is gone; the one holding a lease stays.
    let later = fx.now(16 * 60_000);
    let ids: Vec<String> =
        fx.e.clients_status(later)
            .into_iter()
            .map(|c| c.id)
            .collect();
    assert_eq!(ids, vec!["busy".to_string()]);
}

#[test]
fn a_waiter_a_reload_makes_too_large_is_refused_with_its_own_code() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Tokens, 6_000.0, 10_000.0)]),
    )]);
    // An empty bucket: 8,000 tokens wait for the refill.
    let w = waiter(&fx.acquire("k", 8_000, 0, 120_000, 0));
    let config = fx.e.config().clone();
    let smaller = vec![(
        "k".to_string(),
        limits(vec![rate(Dimension::Tokens, 6_000.0, 5_000.0)]),
    )];
    fx.e.reconfigure(config, smaller, fx.now(1))
        .expect("reconfigure");
    fx.e.pump(fx.now(2));
    let answers = fx.e.drain_answers();
    assert!(
        matches!(&answers[..], [(id, WaiterAnswer::NotGranted(r))] if *id == w
            && r.code == RefusalCode::TooLarge
            && r.not_before_unix_ms == 0),
        "{answers:?}"
    );
}
