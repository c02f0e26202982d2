//! Settling leases on a fake clock: refunds and debt, what counts as used, leases that are never
//! reported, concurrency slots, probes whose clients died.

use super::tests::*;
use super::*;

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
fn an_output_weight_counts_each_output_token_that_many_times_reserved_and_settled() {
    // Bedrock's burndown: each output token counts 5 times against the tokens per minute.
    let mut l = limits(vec![
        rate(Dimension::Tokens, 60_000.0, 10_000.0),
        rate(Dimension::OutputTokens, 60_000.0, 10_000.0),
    ]);
    l.output_weight = Some(5.0);
    let mut fx = Fx::new(vec![("k", l)]).filled();
    let id = lease(&fx.acquire("k", 100, 200, 0, 0));
    // Reserved: the input, and max_tokens five times over; the output limit itself counts each
    // token once.
    assert_eq!(fx.level("k", Dimension::Tokens, 0), 10_000.0 - 1_100.0);
    assert_eq!(fx.level("k", Dimension::OutputTokens, 0), 10_000.0 - 200.0);
    let mut o = ok(200);
    o.input_tokens = 100;
    o.output_tokens = 40;
    fx.e.report(&id, &o, fx.now(0)).expect("report");
    assert_eq!(fx.level("k", Dimension::Tokens, 0), 10_000.0 - 300.0);
    assert_eq!(fx.level("k", Dimension::OutputTokens, 0), 10_000.0 - 40.0);
    // What the key shows used is the provider's usage, unweighted.
    assert_eq!(fx.key_status("k", 0).tokens_used, 140);
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
fn an_abandoned_lease_gives_everything_back() {
    let mut fx = rpm600_burst10();
    let id = lease(&fx.acquire("k", 0, 0, 0, 0));
    assert_eq!(fx.level("k", Dimension::Requests, 0), 9.0);
    fx.e.abandon(&id, fx.now(0));
    assert_eq!(fx.level("k", Dimension::Requests, 0), 10.0);
    assert_eq!(fx.e.lease_count(), 0);
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

/// A caller that gives up is never taken for a refusal or a failure: waits withdrawn, grants
/// given back unsent and requests reported cancelled are counted `cancelled`, free their slots
/// at once, and the ledger of leases balances.
#[test]
fn requests_their_callers_abandon_free_their_slots_and_teach_nothing() {
    let mut l = limits(vec![rate(Dimension::Requests, 600.0, 10.0)]);
    l.max_concurrency = Some(2);
    let mut fx = Fx::new(vec![("k", l)]).filled();
    let sent = lease(&fx.acquire("k", 100, 50, 0, 0));
    let unsent = lease(&fx.acquire("k", 100, 50, 0, 0));
    let queued = waiter(&fx.acquire("k", 100, 50, 10_000, 0));
    // The waiter gives up: it leaves the queue, not refused.
    let r =
        fx.e.withdraw_waiter(queued, fx.now(1))
            .expect("was waiting");
    assert_eq!(r.code, RefusalCode::Cancelled);
    assert!(fx.e.withdraw_waiter(queued, fx.now(1)).is_none());
    // A grant never sent goes back whole: its request unit too.
    let before = fx.level("k", Dimension::Requests, 1);
    assert!(fx.e.abandon(&unsent, fx.now(1)));
    assert!(!fx.e.abandon(&unsent, fx.now(1)), "once");
    let after = fx.level("k", Dimension::Requests, 1);
    assert_eq!(after, before + 1.0);
    // A request sent, then abandoned: counted as made, its slot freed, no advice to wait for.
    let mut o = ok(0);
    o.error_type = "cancelled".into();
    let advice = fx.e.report(&sent, &o, fx.now(2)).expect("report");
    assert_eq!(advice.action, Action::GiveUp);
    // Only the refill of 1 ms (10 a second): the request unit stays taken.
    let refill = 0.01;
    assert!((fx.level("k", Dimension::Requests, 2) - (after + refill)).abs() < 1e-9);
    // Mid-stream, the same.
    let streamed = lease(&fx.acquire("k", 100, 50, 0, 3));
    let mut o = ok(200);
    o.error_type = "cancelled".into();
    o.stream_started = true;
    fx.e.report(&streamed, &o, fx.now(4)).expect("report");
    let st = fx.key_status("k", 5);
    assert_eq!(st.in_flight, 0);
    assert_eq!(st.cancelled_total, 4);
    assert_eq!(st.rejected_total, 0, "a withdrawn wait is not a refusal");
    assert_eq!(st.rate_limited_total, 0);
    assert_eq!(
        st.give_ups_total, 0,
        "a caller that left was not told to give up"
    );
    assert_eq!(st.breaker, super::breaker::BreakerState::Closed);
    assert_eq!(st.learned_concurrency, None);
    assert_eq!(
        (
            st.granted_total,
            st.settled_total,
            st.withdrawn_total,
            st.expired_total
        ),
        (3, 2, 1, 0)
    );
}
