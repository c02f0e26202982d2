//! Retry advice by profile, route groups and fallback, breakers and run budgets, on a fake clock.

use super::tests::*;
use super::*;

fn member(key: &str, when: &[Condition]) -> RouteMember {
    RouteMember {
        key: key.into(),
        when: when.to_vec(),
    }
}

/// `primary`, then `spare` for rate limits and outages, `long` for long prompts, then `last`.
fn chat_group() -> RouteGroup {
    RouteGroup {
        name: "chat".into(),
        members: vec![
            member("primary", &[]),
            member("spare", &[Condition::RateLimited, Condition::Unavailable]),
            member("long", &[Condition::ContextLength]),
            member("last", &[]),
        ],
    }
}

fn policy_fx(breaker: BreakerConfig, run_budget: RunBudget) -> Fx {
    let cfg = EngineConfig {
        transit_allowance: Duration::ZERO,
        route_groups: vec![chat_group()],
        breaker,
        run_budget,
        ..EngineConfig::default()
    };
    // Limits far above what any test asks, so that policy alone decides; a 529 lowering them
    // by a share still leaves plenty.
    let roomy = || limits(vec![rate(Dimension::Requests, 6_000_000.0, 100_000.0)]);
    let keys = vec![
        ("primary", roomy()),
        ("spare", roomy()),
        ("long", roomy()),
        ("last", roomy()),
    ];
    Fx::with_config(cfg, keys).filled()
}

fn via_group(fx: &mut Fx, profile: &str, ms: u64) -> Grant {
    let req = AcquireRequest {
        route_group: "chat".into(),
        profile: profile.into(),
        ..AcquireRequest::default()
    };
    match fx.acquire_req(req, ms) {
        Acquired::Granted(g) => g,
        other => panic!("expected a grant, got {other:?}"),
    }
}

fn failed(status: u16, attempt: u32) -> Outcome {
    Outcome {
        status,
        attempt,
        ..Outcome::default()
    }
}

#[test]
fn retries_within_the_profile_then_falls_back_along_the_chain() {
    let mut fx = policy_fx(
        BreakerConfig {
            min_requests: 1000,
            ..BreakerConfig::default()
        },
        RunBudget::default(),
    );
    let g = via_group(&mut fx, "interactive", 0);
    assert_eq!(g.key, "primary");
    // Attempts 1 and 2 of 3: retry on the same key.
    for attempt in 1..=2 {
        let g = via_group(&mut fx, "interactive", 10);
        let a =
            fx.e.report(&g.lease_id, &failed(503, attempt), fx.now(10))
                .expect("report");
        assert_eq!(a.action, Action::Retry, "attempt {attempt}: {a:?}");
    }
    // The third failure uses up the interactive budget: fall back to the next suitable key.
    let a =
        fx.e.report(&g.lease_id, &failed(503, 3), fx.now(20))
            .expect("report");
    assert_eq!(
        (a.action, a.fallback_key.as_str()),
        (Action::Fallback, "spare"),
        "{a:?}"
    );
    assert!(
        a.reason.contains("attempt 3 of 3") && a.reason.contains("unavailable"),
        "{}",
        a.reason
    );
    // From the spare, the chain goes on to the last plain member, skipping the long-context one.
    let req = AcquireRequest {
        key: "spare".into(),
        ..AcquireRequest::default()
    };
    lease(&fx.acquire_req(req, 30));
    let spare = via_group_key(&mut fx, 1, 30);
    let a =
        fx.e.report(&spare, &failed(500, 8), fx.now(30))
            .expect("report");
    assert_eq!(
        (a.action, a.fallback_key.as_str()),
        (Action::Fallback, "last"),
        "{a:?}"
    );
    let last = via_group_key(&mut fx, 3, 40);
    let a =
        fx.e.report(&last, &failed(500, 8), fx.now(40))
            .expect("report");
    assert_eq!(a.action, Action::GiveUp, "the chain ends: {a:?}");
    let st = fx.key_status("primary", 50);
    assert_eq!(st.fallbacks_total, 1);
    let events = fx.e.recent_events(10);
    assert!(
        events
            .iter()
            .any(|e| e.kind == EventKind::Fallback && e.message.starts_with("to spare")),
        "{events:?}"
    );
}

/// A lease on the group's member `mi`, as if the earlier members could not serve.
fn via_group_key(fx: &mut Fx, mi: usize, ms: u64) -> String {
    let key = chat_group().members[mi].key.clone();
    let id = fx.e.resolve(&key).expect("key");
    let ctx = LeaseCtx {
        route: Some((0, mi)),
        profile: fx.e.profile_index("batch").expect("batch"),
        ..LeaseCtx::default()
    };
    let g = fx.e.grant(
        id,
        Need {
            requests: 1,
            input: 0,
            output: 0,
            undeclared: false,
            learned: false,
            output_weight: None,
        },
        ctx,
        Probes::default(),
        fx.now(ms),
        fx.now(ms).mono,
    );
    g.lease_id
}

#[test]
fn a_context_length_error_falls_back_to_the_long_context_member() {
    let mut fx = policy_fx(BreakerConfig::default(), RunBudget::default());
    let g = via_group(&mut fx, "", 0);
    let mut o = failed(400, 1);
    o.error_type = "invalid_request_error".into();
    o.error_message =
        "This model's maximum context length is 128000 tokens (context_length_exceeded)".into();
    let a = fx.e.report(&g.lease_id, &o, fx.now(0)).expect("report");
    assert_eq!(
        (a.action, a.fallback_key.as_str()),
        (Action::Fallback, "long"),
        "{a:?}"
    );
    // A plain 400 on a key outside any route group is a give-up.
    let l = lease(&fx.acquire("solo", 0, 0, 0, 0));
    assert_eq!(
        fx.e.report(&l, &o, fx.now(0)).expect("report").action,
        Action::GiveUp
    );
}

#[test]
fn the_deadline_is_never_overrun() {
    let mut fx = policy_fx(
        BreakerConfig {
            min_requests: 1_000_000,
            ..BreakerConfig::default()
        },
        RunBudget::default(),
    );
    // Interactive: 8 s from the first attempt. Each retry's delay must end before it.
    for start_ago in [0u64, 2000, 5000, 7000, 7900] {
        for round in 0..20 {
            let now = 100_000 + round * 20_000;
            let g = via_group(&mut fx, "interactive", now);
            let mut o = failed(503, 2);
            o.first_attempt_unix_ms = T0_UNIX + (now - start_ago) as i64;
            let a = fx.e.report(&g.lease_id, &o, fx.now(now)).expect("report");
            let deadline = o.first_attempt_unix_ms + 8000;
            match a.action {
                Action::Retry => assert!(
                    T0_UNIX + now as i64 + a.retry_after.as_millis() as i64 <= deadline,
                    "{start_ago}: retry in {:?} overruns",
                    a.retry_after
                ),
                Action::Fallback | Action::GiveUp => {
                    assert!(a.reason.contains("deadline"), "{a:?}")
                }
                Action::Done => panic!("a 503 is not done"),
            }
        }
    }
    // A Retry-After beyond the deadline: not a retry.
    let l = lease(&fx.acquire_req(
        AcquireRequest {
            key: "solo".into(),
            profile: "interactive".into(),
            ..AcquireRequest::default()
        },
        900_000,
    ));
    let o = with_headers(429, &[("retry-after", "30")], T0_UNIX);
    let a = fx.e.report(&l, &o, fx.now(900_000)).expect("report");
    assert_eq!(a.action, Action::GiveUp);
    assert!(
        a.reason
            .contains("past the interactive profile's 8 s deadline"),
        "{}",
        a.reason
    );
}

#[test]
fn the_group_skips_keys_in_cooldown_or_with_an_open_breaker() {
    let breaker = BreakerConfig {
        failure_rate: 0.5,
        min_requests: 2,
        window: Duration::from_secs(10),
        open_for: Duration::from_secs(5),
    };
    let mut fx = policy_fx(breaker, RunBudget::default());
    // The spare serves only when the primary cannot.
    assert_eq!(via_group(&mut fx, "", 0).key, "primary");
    fx.e.cooldown("primary", Duration::from_secs(3), "test", fx.now(0))
        .expect("cooldown");
    assert_eq!(via_group(&mut fx, "", 1).key, "spare");
    // After the cooldown one probe goes to the primary; when it succeeds the rest follow.
    let probe = via_group(&mut fx, "", 4000);
    assert_eq!(probe.key, "primary");
    assert_eq!(
        via_group(&mut fx, "", 4000).key,
        "spare",
        "the primary waits for its probe"
    );
    fx.e.report(&probe.lease_id, &ok(200), fx.now(4000))
        .expect("report");
    // Then failures open the primary's breaker.
    let a = via_group(&mut fx, "", 4000);
    let b = via_group(&mut fx, "", 4000);
    assert_eq!((a.key.as_str(), b.key.as_str()), ("primary", "primary"));
    // With the probe's success, one failure of two is already half: the breaker opens at 4001.
    fx.e.report(&a.lease_id, &failed(500, 1), fx.now(4001))
        .expect("report");
    fx.e.report(&b.lease_id, &failed(500, 1), fx.now(4002))
        .expect("report");
    assert_eq!(fx.key_status("primary", 4003).breaker, BreakerState::Open);
    assert_eq!(via_group(&mut fx, "", 4003).key, "spare");
    // The key itself refuses with the breaker named, and says when to come back.
    match fx.acquire("primary", 0, 0, 0, 4004) {
        Acquired::NotGranted(r) => {
            assert_eq!(r.code, RefusalCode::BreakerOpen);
            assert!(r.reason.contains("circuit breaker"), "{}", r.reason);
            assert_eq!(r.not_before_unix_ms, T0_UNIX + 4001 + 5000);
        }
        other => panic!("{other:?}"),
    }
    let events = fx.e.recent_events(20);
    assert!(
        events
            .iter()
            .any(|e| e.kind == EventKind::Breaker && e.message.contains("opened")),
        "{events:?}"
    );
}

#[test]
fn breaker_open_then_half_open_with_one_probe_then_closed() {
    let breaker = BreakerConfig {
        failure_rate: 0.5,
        min_requests: 2,
        window: Duration::from_secs(10),
        open_for: Duration::from_secs(5),
    };
    let mut fx = policy_fx(breaker, RunBudget::default());
    let a = lease(&fx.acquire("primary", 0, 0, 0, 0));
    let b = lease(&fx.acquire("primary", 0, 0, 0, 0));
    fx.e.report(&a, &failed(503, 1), fx.now(1)).expect("report");
    fx.e.report(&b, &failed(529, 1), fx.now(2)).expect("report");
    assert_eq!(fx.key_status("primary", 3).breaker, BreakerState::Open);
    assert!(matches!(
        fx.acquire("primary", 0, 0, 0, 4000),
        Acquired::NotGranted(_)
    ));
    // Half-open: one probe goes, the rest wait for its answer.
    let probe = lease(&fx.acquire("primary", 0, 0, 0, 5002));
    assert_eq!(
        fx.key_status("primary", 5002).breaker,
        BreakerState::HalfOpen
    );
    let w = waiter(&fx.acquire("primary", 0, 0, 10_000, 5003));
    fx.e.pump(fx.now(5100));
    assert!(fx.e.drain_answers().is_empty());
    fx.e.report(&probe, &ok(200), fx.now(5200)).expect("report");
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![w]);
    assert_eq!(fx.key_status("primary", 5200).breaker, BreakerState::Closed);
}

#[test]
fn run_budgets_refuse_further_calls() {
    let budget = RunBudget {
        max_calls: Some(2),
        max_retries: Some(1),
        max_wall_time: Some(Duration::from_secs(60)),
    };
    let mut fx = policy_fx(BreakerConfig::default(), budget);
    let req = |run: &str| AcquireRequest {
        key: "primary".into(),
        run_id: run.into(),
        ..AcquireRequest::default()
    };
    let a = lease(&fx.acquire_req(req("agent-1"), 0));
    lease(&fx.acquire_req(req("agent-1"), 0));
    match fx.acquire_req(req("agent-1"), 0) {
        Acquired::NotGranted(r) => assert!(
            r.code == RefusalCode::RunBudget && r.reason.contains("max_calls"),
            "{}",
            r.reason
        ),
        other => panic!("{other:?}"),
    }
    // Another run is not affected; the wall-time bound applies later.
    lease(&fx.acquire_req(req("agent-2"), 0));
    match fx.acquire_req(req("agent-2"), 61_000) {
        Acquired::NotGranted(r) => assert!(
            r.code == RefusalCode::RunBudget && r.reason.contains("max_wall_time"),
            "{}",
            r.reason
        ),
        other => panic!("{other:?}"),
    }
    // Retries count per run; past max_retries the advice is to give up.
    let b =
        fx.e.report(&a, &failed(503, 1), fx.now(10))
            .expect("report");
    assert_eq!(b.action, Action::Retry);
    assert_eq!(fx.e.run_calls("agent-1"), Some((2, 1)));
    fx.e.set_run_budget(
        "agent-1",
        RunBudget {
            max_calls: Some(10),
            max_retries: Some(1),
            max_wall_time: None,
        },
        fx.now(20),
    )
    .expect("budget");
    let c = lease(&fx.acquire_req(req("agent-1"), 20));
    let advice =
        fx.e.report(&c, &failed(503, 1), fx.now(21))
            .expect("report");
    assert_eq!(advice.action, Action::GiveUp);
    assert!(advice.reason.starts_with("run_budget"), "{}", advice.reason);
    let runs = fx.e.runs_status(fx.now(30));
    assert_eq!(
        runs.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(),
        vec!["agent-1", "agent-2"]
    );
    assert_eq!(runs[0].budget.max_calls, Some(10));
    assert!(runs[1].exhausted.is_none(), "within 60 s at 30 ms");
}

#[test]
fn unknown_profiles_and_groups_are_named() {
    let mut fx = policy_fx(BreakerConfig::default(), RunBudget::default());
    let e =
        fx.e.acquire(
            &AcquireRequest {
                key: "k".into(),
                profile: "urgent".into(),
                ..Default::default()
            },
            fx.now(0),
        )
        .expect_err("unknown profile");
    assert!(
        e.to_string().contains("\"urgent\"") && e.to_string().contains("interactive"),
        "{e}"
    );
    let e =
        fx.e.acquire(
            &AcquireRequest {
                route_group: "nope".into(),
                ..Default::default()
            },
            fx.now(0),
        )
        .expect_err("unknown group");
    assert!(
        e.to_string().contains("\"nope\"") && e.to_string().contains("chat"),
        "{e}"
    );
    let bad = EngineConfig {
        route_groups: vec![RouteGroup {
            name: "g".into(),
            members: vec![member("x", &[Condition::RateLimited])],
        }],
        ..EngineConfig::default()
    };
    let err = Engine::new(bad, vec![], fx.now(0), 1)
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains("no member without `when`"),
        "{err}"
    );
}

#[test]
fn a_group_whose_keys_all_cool_refuses_with_the_route_group_code() {
    let mut fx = policy_fx(BreakerConfig::default(), RunBudget::default());
    for key in ["primary", "spare", "long", "last"] {
        fx.e.cooldown(key, Duration::from_secs(3), "test", fx.now(0))
            .expect("cooldown");
    }
    let req = AcquireRequest {
        route_group: "chat".into(),
        ..AcquireRequest::default()
    };
    match fx.acquire_req(req, 1) {
        Acquired::NotGranted(r) => {
            assert_eq!(r.code, RefusalCode::RouteGroup);
            assert_eq!(r.not_before_unix_ms, T0_UNIX + 3000);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_run_out_of_retries_gives_up_instead_of_falling_back_to_another_member() {
    let budget = RunBudget {
        max_calls: None,
        max_retries: Some(0),
        max_wall_time: None,
    };
    let mut fx = policy_fx(BreakerConfig::default(), budget);
    let req = AcquireRequest {
        route_group: "chat".into(),
        run_id: "agent-1".into(),
        ..AcquireRequest::default()
    };
    let g = match fx.acquire_req(req, 0) {
        Acquired::Granted(g) => g,
        other => panic!("expected a grant, got {other:?}"),
    };
    // A 503 past the profile's attempts on the first member falls back to `spare` (kept for
    // outages), but the run may retry no more on any member.
    let a =
        fx.e.report(&g.lease_id, &failed(503, 100), fx.now(1))
            .expect("report");
    assert_eq!(a.action, Action::GiveUp, "{a:?}");
    assert!(a.reason.starts_with("run_budget"), "{}", a.reason);
    let g = via_group(&mut fx, "", 2);
    let a =
        fx.e.report(&g.lease_id, &failed(503, 100), fx.now(3))
            .expect("report");
    assert_eq!(
        (a.action, a.fallback_key.as_str()),
        (Action::Fallback, "spare"),
        "without a run the same answer falls back: {a:?}"
    );
}
