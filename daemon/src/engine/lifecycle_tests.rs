//! The engine across restarts and at its edges, on a fake clock: snapshots and restores, unclean
//! stops, bad input, its own bounds, stopping.

use super::tests::*;
use super::*;

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
