//! Plan windows on a fake clock: learned from headers, warned of past `warn_at`, a closed one
//! refusing every key of the plan at once until its reset (and no key whose answers never
//! carried the plan), and brought back after a restart.

use super::tests::*;
use super::*;

const HOUR_MS: i64 = 3_600_000;

/// Claude Code's subscription headers at `used` of the 5-hour window (resetting in 2 h) and
/// 40 % of the 7-day one.
fn unified(status: &str, used: f64) -> Vec<(String, String)> {
    let reset5 = ((T0_UNIX + 2 * HOUR_MS) / 1000).to_string();
    let reset7 = ((T0_UNIX + 72 * HOUR_MS) / 1000).to_string();
    [
        ("anthropic-ratelimit-unified-status", status.to_string()),
        (
            "anthropic-ratelimit-unified-5h-utilization",
            used.to_string(),
        ),
        ("anthropic-ratelimit-unified-5h-reset", reset5.clone()),
        ("anthropic-ratelimit-unified-7d-utilization", "0.4".into()),
        ("anthropic-ratelimit-unified-7d-reset", reset7),
        (
            "anthropic-ratelimit-unified-representative-claim",
            "five_hour".into(),
        ),
        ("anthropic-ratelimit-unified-reset", reset5),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v))
    .collect()
}

fn answer(status: u16, headers: &[(String, String)], error_type: &str) -> Outcome {
    let pairs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    Outcome {
        error_type: error_type.into(),
        usage_known: status == 200,
        ..with_headers(status, &pairs, T0_UNIX)
    }
}

fn two_models() -> Fx {
    Fx::new(vec![
        (
            "anthropic/opus",
            limits(vec![rate(Dimension::Requests, 600.0, 10.0)]),
        ),
        (
            "anthropic/sonnet",
            limits(vec![rate(Dimension::Requests, 600.0, 10.0)]),
        ),
    ])
    .filled()
}

#[test]
fn windows_are_learned_into_status_and_warned_of_once_past_warn_at() {
    let mut fx = two_models();
    let a = lease(&fx.acquire("anthropic/opus", 0, 0, 0, 0));
    fx.e.report(&a, &answer(200, &unified("allowed", 0.5), ""), fx.now(1))
        .expect("report");
    let st = fx.key_status("anthropic/opus", 1);
    let w = &st.plan_windows;
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!(
        (w[0].label.as_str(), w[0].window.used),
        ("5-hour window", Some(0.5))
    );
    assert_eq!(w[0].window.resets_at_unix_ms, Some(T0_UNIX + 2 * HOUR_MS));
    assert!(w[0].binding && !w[0].closed);
    assert_eq!(w[1].label, "7-day window");
    let warnings = |fx: &Fx| {
        fx.e.recent_events(100)
            .into_iter()
            .filter(|e| e.kind == EventKind::PlanWindow)
            .count()
    };
    assert_eq!(warnings(&fx), 0, "50 % is below 90 %");
    // Past 90 %: one warning, not one per answer.
    for i in 0..3 {
        let a = lease(&fx.acquire("anthropic/opus", 0, 0, 0, 2 + i));
        let h = unified("allowed_warning", 0.92 + i as f64 * 0.01);
        fx.e.report(&a, &answer(200, &h, ""), fx.now(2 + i))
            .expect("report");
    }
    assert_eq!(warnings(&fx), 1);
    let ev = fx.e.recent_events(100);
    let msg = &ev
        .iter()
        .find(|e| e.kind == EventKind::PlanWindow)
        .expect("a warning")
        .message;
    assert!(
        msg.contains("5-hour window is 92 % used (warn_at 90 %)") && msg.contains("UTC"),
        "{msg}"
    );
}

#[test]
fn warn_at_is_the_keys_or_its_ancestors() {
    let account = KeyLimits {
        warn_at: Some(0.5),
        ..KeyLimits::default()
    };
    let mut fx = Fx::new(vec![("anthropic", account)]).filled();
    let a = lease(&fx.acquire("anthropic/opus", 0, 0, 0, 0));
    fx.e.report(&a, &answer(200, &unified("allowed", 0.6), ""), fx.now(1))
        .expect("report");
    let warned = fx.e.recent_events(100);
    assert!(
        warned
            .iter()
            .any(|e| e.kind == EventKind::PlanWindow && e.message.contains("(warn_at 50 %)")),
        "{warned:?}"
    );
}

#[test]
fn a_closed_window_refuses_every_key_of_the_plan_at_once_until_its_reset() {
    let mut fx = two_models();
    let a = lease(&fx.acquire("anthropic/opus", 0, 0, 0, 0));
    let b = lease(&fx.acquire("anthropic/opus", 0, 0, 0, 0));
    // Another model of the same plan (its answers carry the plan's windows), then a waiter on
    // it with a long wait.
    let first = lease(&fx.acquire("anthropic/sonnet", 0, 0, 0, 0));
    for _ in 0..9 {
        lease(&fx.acquire("anthropic/sonnet", 0, 0, 0, 0));
    }
    fx.e.report(
        &first,
        &answer(200, &unified("allowed", 0.9), ""),
        fx.now(1),
    )
    .expect("report");
    let w = waiter(&fx.acquire("anthropic/sonnet", 0, 0, 600_000, 1));
    // An application on an API key under the same provider: its answers carry no plan.
    let app = lease(&fx.acquire("anthropic/other-app", 0, 0, 0, 1));
    let api_headers = vec![(
        "anthropic-ratelimit-requests-remaining".to_string(),
        "40".to_string(),
    )];
    fx.e.report(&app, &answer(200, &api_headers, ""), fx.now(2))
        .expect("report");
    let refused = answer(429, &unified("rejected", 1.0), "rate_limit_error");
    let advice = fx.e.report(&a, &refused, fx.now(5)).expect("report");
    assert_eq!(advice.action, Action::GiveUp, "{advice:?}");
    assert!(advice.reason.contains("5-hour window"), "{}", advice.reason);
    let reset = T0_UNIX + 2 * HOUR_MS;
    let answers = fx.e.drain_answers();
    assert_eq!(answers.len(), 1, "the waiter is answered at once");
    match &answers[0] {
        (id, WaiterAnswer::NotGranted(r)) => {
            assert_eq!(*id, w);
            assert_eq!(r.code, RefusalCode::PlanWindow);
            assert_eq!(r.not_before_unix_ms, reset);
            assert!(
                r.reason.contains("the plan's 5-hour window is spent"),
                "{}",
                r.reason
            );
        }
        other => panic!("{other:?}"),
    }
    // The API key's application is not refused because the subscription is spent.
    match fx.acquire("anthropic/other-app", 0, 0, 0, 10) {
        Acquired::Granted(g) => {
            fx.e.report(&g.lease_id, &answer(200, &api_headers, ""), fx.now(10))
                .expect("report");
        }
        other => panic!("another credential's key is not closed: {other:?}"),
    }
    // Every model of the plan, asked again, is refused at once.
    for key in ["anthropic/opus", "anthropic/sonnet"] {
        match fx.acquire(key, 0, 0, 3_600_000, 10) {
            Acquired::NotGranted(r) => {
                assert_eq!(r.code, RefusalCode::PlanWindow, "{key}");
                assert_eq!(r.not_before_unix_ms, reset, "{key}");
            }
            other => panic!("{key}: {other:?}"),
        }
    }
    // The other lease in flight, refused too, does not move the reset.
    fx.e.report(&b, &refused, fx.now(20)).expect("report");
    let st = fx.key_status("anthropic/opus", 30);
    assert_eq!(
        st.buckets[0].bucket.limit, 600.0,
        "the minute's rate is not cut"
    );
    assert!(st.plan_windows[0].closed, "{:?}", st.plan_windows);
    assert_eq!(st.daily_quota, Some((reset, "5-hour window".to_string())));
    // After the reset, the account serves again.
    let after = (2 * HOUR_MS) as u64 + 10;
    assert!(matches!(
        fx.acquire("anthropic/sonnet", 0, 0, 0, after),
        Acquired::Granted(_)
    ));
}

#[test]
fn a_throttle_that_is_not_the_usage_limit_is_only_a_cooldown() {
    let mut fx = two_models();
    let a = lease(&fx.acquire("anthropic/opus", 0, 0, 0, 0));
    let mut o = answer(429, &unified("allowed", 0.3), "rate_limit_error");
    o.error_message = "Server is temporarily limiting requests (not your usage limit)".into();
    o.signals.retry_after = Some(Duration::from_secs(2));
    fx.e.report(&a, &o, fx.now(1)).expect("report");
    match fx.acquire("anthropic/sonnet", 0, 0, 0, 10) {
        Acquired::Granted(_) => {}
        other => panic!("another model is not cooled: {other:?}"),
    }
    match fx.acquire("anthropic/opus", 0, 0, 0, 10) {
        Acquired::NotGranted(r) => assert_eq!(r.code, RefusalCode::Cooldown),
        other => panic!("{other:?}"),
    }
}

#[test]
fn codex_usage_limit_reached_closes_its_window_from_the_body_alone() {
    let mut fx = Fx::new(vec![(
        "codex/gpt-5.5",
        limits(vec![rate(Dimension::Requests, 600.0, 10.0)]),
    )])
    .filled();
    let a = lease(&fx.acquire("codex/gpt-5.5", 0, 0, 0, 0));
    let mut o = answer(429, &[], "usage_limit_reached");
    o.error_message = "The usage limit has been reached [resets_in_seconds=5400]".into();
    fx.e.report(&a, &o, fx.now(0)).expect("report");
    match fx.acquire("codex/gpt-5.5", 0, 0, 60_000, 1) {
        Acquired::NotGranted(r) => {
            assert_eq!(r.code, RefusalCode::PlanWindow);
            assert_eq!(r.not_before_unix_ms, T0_UNIX + 5_400_000);
        }
        other => panic!("{other:?}"),
    }
    let st = fx.key_status("codex/gpt-5.5", 1);
    assert_eq!(st.plan_windows[0].label, "plan window");
    assert!(st.plan_windows[0].closed);
}

#[test]
fn windows_and_a_closed_one_survive_a_restart() {
    let mut fx = two_models();
    let s = lease(&fx.acquire("anthropic/sonnet", 0, 0, 0, 0));
    fx.e.report(&s, &answer(200, &unified("allowed", 0.9), ""), fx.now(0))
        .expect("report");
    let a = lease(&fx.acquire("anthropic/opus", 0, 0, 0, 0));
    fx.e.report(&a, &answer(429, &unified("rejected", 1.0), ""), fx.now(1))
        .expect("report");
    let snaps = fx.e.snapshot_all(fx.now(2));
    let cooldowns = fx.e.cooldowns_snapshot(fx.now(2));
    let mut fx2 = two_models();
    fx2.e.restore(&snaps, &cooldowns, fx2.now(1000));
    let st = fx2.key_status("anthropic/opus", 1000);
    assert_eq!(st.plan_windows.len(), 2, "{:?}", st.plan_windows);
    assert_eq!(st.plan_windows[0].window.used, Some(1.0));
    assert!(st.plan_windows[0].closed);
    match fx2.acquire("anthropic/sonnet", 0, 0, 60_000, 1000) {
        Acquired::NotGranted(r) => assert_eq!(r.code, RefusalCode::PlanWindow),
        other => panic!("{other:?}"),
    }
}

/// The 5-hour window alone, `used` of it, resetting in `left_h` hours.
fn five_hours(used: f64, left_h: i64) -> Vec<(String, String)> {
    let reset = ((T0_UNIX + left_h * HOUR_MS) / 1000).to_string();
    vec![
        (
            "anthropic-ratelimit-unified-status".into(),
            "allowed".into(),
        ),
        (
            "anthropic-ratelimit-unified-5h-utilization".into(),
            used.to_string(),
        ),
        ("anthropic-ratelimit-unified-5h-reset".into(), reset),
    ]
}

#[test]
fn a_window_budget_paces_the_account_over_its_window() {
    let account = KeyLimits {
        window_budget: Some(0.5),
        ..KeyLimits::default()
    };
    let mut fx = Fx::new(vec![
        ("anthropic", account),
        (
            "anthropic/opus",
            limits(vec![rate(Dimension::Requests, 600.0, 10.0)]),
        ),
    ])
    .filled();
    // An hour into the window (4 h left), 30 % used: the pace allows 50 % x (20 % + 10 %).
    let a = lease(&fx.acquire("anthropic/opus", 0, 0, 0, 0));
    fx.e.report(&a, &answer(200, &five_hours(0.3, 4), ""), fx.now(1))
        .expect("report");
    match fx.acquire("anthropic/opus", 0, 0, 0, 2) {
        Acquired::NotGranted(r) => {
            assert_eq!(r.code, RefusalCode::PlanWindow);
            // The pace reaches 30 % half way through the window: 2.5 h before its reset.
            let at = T0_UNIX + 4 * HOUR_MS - 5 * HOUR_MS / 2;
            assert!((r.not_before_unix_ms - at).abs() < 1000, "{r:?}");
            assert!(
                r.reason.contains("paced to window_budget 50 %"),
                "{}",
                r.reason
            );
        }
        other => panic!("{other:?}"),
    }
    // Below the pace: served at once.
    let mut fx2 = Fx::new(vec![
        (
            "anthropic",
            KeyLimits {
                window_budget: Some(0.5),
                ..KeyLimits::default()
            },
        ),
        (
            "anthropic/opus",
            limits(vec![rate(Dimension::Requests, 600.0, 10.0)]),
        ),
    ])
    .filled();
    let a = lease(&fx2.acquire("anthropic/opus", 0, 0, 0, 0));
    fx2.e
        .report(&a, &answer(200, &five_hours(0.1, 4), ""), fx2.now(1))
        .expect("report");
    assert!(matches!(
        fx2.acquire("anthropic/opus", 0, 0, 0, 2),
        Acquired::Granted(_)
    ));
    // The budget spent: nothing until the window resets.
    let a = lease(&fx2.acquire("anthropic/opus", 0, 0, 0, 3));
    fx2.e
        .report(&a, &answer(200, &five_hours(0.55, 4), ""), fx2.now(4))
        .expect("report");
    match fx2.acquire("anthropic/opus", 0, 0, 0, 5) {
        Acquired::NotGranted(r) => {
            assert_eq!(r.code, RefusalCode::PlanWindow);
            assert_eq!(r.not_before_unix_ms, T0_UNIX + 4 * HOUR_MS);
        }
        other => panic!("{other:?}"),
    }
    // Without a budget, nothing is paced.
    let mut fx3 = two_models();
    let a = lease(&fx3.acquire("anthropic/opus", 0, 0, 0, 0));
    fx3.e
        .report(&a, &answer(200, &five_hours(0.95, 4), ""), fx3.now(1))
        .expect("report");
    assert!(matches!(
        fx3.acquire("anthropic/opus", 0, 0, 0, 2),
        Acquired::Granted(_)
    ));
}
