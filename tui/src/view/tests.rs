//! Snapshots of whole screens drawn into a TestBackend, reviewed as text diffs.

use super::*;
use crate::fixtures::*;
use crate::state::{Action, Connection};
use llmctl_proto::v1 as pb;
use std::time::{Duration, Instant};

fn screen(d: &Dashboard, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal.draw(|f| draw(f, d)).expect("draw");
    terminal
}

/// A minute of traffic, one message a second; the opus key takes 429s from `storm_from` on.
fn traffic(storm_from: Option<i64>) -> Dashboard {
    let mut d = Dashboard::new("/tmp/unused.sock");
    let now = Instant::now();
    for s in 0..60 {
        let t = T0 + s * 1_000;
        let (rl, cooldown) = match storm_from {
            Some(from) if s >= from => (s - from + 1, 2_500),
            _ => (0, 0),
        };
        let mut m = status(t, vec![opus(t, rl, cooldown), idle(), gpt(t)]);
        m.events = events(t, storm_from.is_some());
        d.apply_status(m, now);
    }
    d
}

fn events(t: i64, storm: bool) -> Vec<pb::Event> {
    let mut e = vec![event(
        t - 20_000,
        "openai/gpt-5.5",
        "fallback",
        "to azure/gpt-5.5 after 503",
    )];
    if storm {
        e.push(event(
            t - 4_000,
            "anthropic/org-a/opus",
            "cooldown",
            "2.5s: provider answered 429 rate_limit_error",
        ));
        e.push(event(
            t - 1_000,
            "anthropic/org-a/opus",
            "give_up",
            "insufficient_quota",
        ));
    }
    e
}

fn select(d: &mut Dashboard, key: &str) {
    for _ in 0..d.rows().len() {
        if d.selected() == Some(key) {
            return;
        }
        d.handle(Action::SelectNext);
    }
    assert_eq!(d.selected(), Some(key));
}

#[test]
fn normal_traffic() {
    let mut d = traffic(None);
    select(&mut d, "openai/gpt-5.5");
    insta::assert_snapshot!(screen(&d, 120, 30).backend());
}

#[test]
fn a_key_in_cooldown() {
    let d = traffic(Some(50));
    let text = render_text(&d, 120, 30);
    assert!(text.contains("in cooldown"), "{text}");
    insta::assert_snapshot!(screen(&d, 120, 30).backend());
}

#[test]
fn a_fleet_host_shows_its_fleet_and_each_keys_share() {
    let mut d = traffic(None);
    let t = T0 + 61_000;
    let mut gpt_shared = gpt(t);
    gpt_shared.fleet_shared = true;
    gpt_shared.fleet_share = 0.4;
    gpt_shared.fleet_slots = 3;
    let mut m = status(t, vec![opus(t, 0, 0), idle(), gpt_shared]);
    m.fleet = Some(pb::FleetStatus {
        host: "web-2".into(),
        connected: true,
        hosts: 3,
        ..Default::default()
    });
    d.apply_status(m.clone(), Instant::now());
    select(&mut d, "openai/gpt-5.5");
    let text = render_text(&d, 120, 30);
    assert!(text.contains("fleet web-2 of 3 hosts connected"), "{text}");
    assert!(text.contains("fleet share 40 %  slots 3"), "{text}");
    if let Some(f) = m.fleet.as_mut() {
        f.connected = false;
    }
    d.apply_status(m, Instant::now());
    let text = render_text(&d, 120, 30);
    assert!(text.contains("fleet web-2 of 3 hosts DEGRADED"), "{text}");
}

#[test]
fn disconnected() {
    let mut d = traffic(Some(50));
    d.set_connection(Connection::Disconnected {
        reason: "no llmctl daemon is answering on /run/user/1000/llmctl/llmctl.sock".into(),
        retry_in: Duration::from_millis(1_000),
    });
    insta::assert_snapshot!(screen(&d, 120, 30).backend());
}

#[test]
fn small_terminal_80x24() {
    let mut d = traffic(Some(50));
    select(&mut d, "openai/gpt-5.5");
    insta::assert_snapshot!(screen(&d, 80, 24).backend());
}

/// Traffic from two client processes and a batch run, the clients panel open.
fn spending() -> Dashboard {
    let mut d = traffic(Some(50));
    let now = Instant::now();
    let t = T0 + 61_000;
    let mut m = status(t, vec![opus(t, 11, 2_500), idle(), gpt(t)]);
    m.clients = vec![
        pb::ClientStatus {
            client_id: "web-7f3a-4242-9c1e".into(),
            pid: 4242,
            process_name: "gunicorn".into(),
            uid: 1000,
            user: "svc-web".into(),
            requests_per_second: 3.4,
            tokens_per_minute: 182_000.0,
            in_flight: 6,
            queue_depth: 2,
            rate_limited_total: 9,
            granted_total: 2_040,
        },
        pb::ClientStatus {
            client_id: "celery-worker-3".into(),
            pid: 5120,
            process_name: "celery".into(),
            uid: 1001,
            user: "svc-batch".into(),
            requests_per_second: 1.2,
            tokens_per_minute: 64_500.0,
            in_flight: 2,
            queue_depth: 11,
            rate_limited_total: 2,
            granted_total: 720,
        },
    ];
    m.runs = vec![pb::RunStatus {
        run_id: "nightly-eval-2026-11-30".into(),
        calls: 640,
        requests_per_second: 1.1,
        tokens_per_minute: 61_000.0,
        in_flight: 2,
        queue_depth: 11,
        rate_limited_total: 2,
        ..Default::default()
    }];
    d.apply_status(m, now);
    d.handle(Action::ToggleClients);
    d
}

#[test]
fn clients_panel_160x45() {
    let d = spending();
    let text = render_text(&d, 160, 45);
    let order: Vec<usize> = ["web-7f3a", "celery-worker-3", "nightly-eval"]
        .iter()
        .map(|n| {
            text.find(n)
                .unwrap_or_else(|| panic!("{n} missing:\n{text}"))
        })
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "most tokens first:\n{text}"
    );
    insta::assert_snapshot!(screen(&d, 160, 45).backend());
}

#[test]
fn clients_panel_80x24() {
    let d = spending();
    assert!(render_text(&d, 80, 24).contains("who spends the quota"));
    insta::assert_snapshot!(screen(&d, 80, 24).backend());
}

#[test]
fn charts_160x45() {
    let mut d = traffic(Some(50));
    select(&mut d, "anthropic/org-a/opus");
    let text = render_text(&d, 160, 45);
    for title in [
        "requests/s",
        "tokens/min",
        "429s, fallbacks /min",
        "queue wait",
    ] {
        assert!(text.contains(title), "{title} missing:\n{text}");
    }
    assert!(text.contains("-5m"), "five minutes by default:\n{text}");
    insta::assert_snapshot!(screen(&d, 160, 45).backend());
    d.handle(Action::CycleWindow);
    assert!(render_text(&d, 160, 45).contains("-15m"));
    d.handle(Action::CycleWindow);
    assert!(render_text(&d, 160, 45).contains("-1m"));
}

#[test]
fn figure_columns_fit_their_widest_text() {
    let mut d = Dashboard::new("/tmp/unused.sock");
    let mut k = gpt(T0);
    k.queue_wait_p50_ms = 354;
    k.queue_wait_p95_ms = 185_000;
    k.tokens_reserved = 12_345_678_901;
    k.tokens_used = 9_876_543_210;
    d.apply_status(status(T0, vec![k]), Instant::now());
    for (w, h) in [(80, 24), (160, 45)] {
        let text = render_text(&d, w, h);
        let row = text
            .lines()
            .find(|l| l.contains("openai/gpt-5.5"))
            .expect("row");
        let wait = format!("{}/{}", format::millis(354), format::millis(185_000));
        assert!(row.contains(&wait), "{w}x{h}: {row}");
        assert!(row.contains("12G/9.9G"), "{w}x{h}: {row}");
    }
}

#[test]
fn help() {
    let mut d = traffic(None);
    d.handle(Action::ToggleHelp);
    insta::assert_snapshot!(screen(&d, 80, 24).backend());
}

#[test]
fn connecting_before_the_first_message() {
    let d = Dashboard::new("/tmp/llmctl-0/llmctl.sock");
    insta::assert_snapshot!(screen(&d, 80, 24).backend());
}

#[test]
fn paused_with_a_filter_being_typed() {
    let mut d = traffic(None);
    d.handle(Action::TogglePause);
    d.handle(Action::StartFilter);
    for c in "open".chars() {
        d.handle(Action::FilterInput(c));
    }
    insta::assert_snapshot!(screen(&d, 80, 24).backend());
}

#[test]
fn any_size_draws_without_panicking() {
    let d = traffic(Some(50));
    for (w, h) in [(1, 1), (20, 5), (40, 12), (60, 18), (100, 40), (250, 80)] {
        let text = render_text(&d, w, h);
        assert!(text.lines().count() <= h as usize);
        if w >= 60 && h >= 12 {
            assert!(text.contains("anthropic/org-a/opus"), "{w}x{h}:\n{text}");
        }
    }
}

#[test]
fn plain_text_has_no_trailing_blanks() {
    let d = traffic(None);
    let text = render_text(&d, 120, 30);
    assert!(text.lines().all(|l| !l.ends_with(' ')));
    assert!(text.starts_with(" llmctl top"), "{text}");
    assert!(text.contains("openai/gpt-5.5"));
}

#[test]
fn one_message_as_plain_text() {
    // What `llmctl top --once` prints: a single status, no history yet.
    let mut d = Dashboard::new("/tmp/unused.sock");
    let mut m = status(T0, vec![opus(T0, 3, 2_000), idle(), gpt(T0)]);
    m.events = events(T0, true);
    d.apply_status(m, Instant::now());
    insta::assert_snapshot!(render_text(&d, 100, 24));
}

#[test]
fn a_calibrated_limit_shows_its_source_and_the_configured_one() {
    let mut d = Dashboard::new("/tmp/unused.sock");
    let mut key = gpt(T0);
    key.buckets[0] = pb::Bucket {
        limit: 300.0,
        source: "headers".into(),
        source_code: pb::LimitSource::Headers as i32,
        learned_limit: 300.0,
        learned_source: "headers".into(),
        learned_source_code: pb::LimitSource::Headers as i32,
        ..bucket("requests", 600.0, 10.0, 6.0)
    };
    key.buckets[1] = pb::Bucket {
        limit: 320_000.0,
        source: "aimd".into(),
        source_code: pb::LimitSource::Aimd as i32,
        learned_limit: 320_000.0,
        learned_source: "aimd".into(),
        learned_source_code: pb::LimitSource::Aimd as i32,
        ..bucket("tokens", 400_000.0, 400_000.0, 310_000.0)
    };
    d.apply_status(status(T0, vec![key]), Instant::now());
    // The detail pane names sources where it has room for them.
    let text = render_text(&d, 200, 40);
    assert!(
        text.contains("left of 300/min from headers (cfg 600)"),
        "{text}"
    );
    assert!(text.contains("from aimd (cfg 400k)"), "{text}");
}

#[test]
fn a_state_this_build_does_not_know_is_shown_as_unknown() {
    let mut d = Dashboard::new("/tmp/unused.sock");
    let mut key = gpt(T0);
    // A newer daemon's dimension, and a source it did not send: never read as the string.
    key.buckets[0] = pb::Bucket {
        dimension_code: 99,
        source: "headers".into(),
        source_code: 99,
        ..bucket("requests", 600.0, 10.0, 6.0)
    };
    d.apply_status(status(T0, vec![key]), Instant::now());
    let text = render_text(&d, 200, 40);
    assert!(text.contains("unknown/min"), "{text}");
    assert!(text.contains("from unknown"), "{text}");
    assert!(!text.contains("req/min"), "{text}");
}

#[test]
fn an_older_daemon_that_sends_only_the_names_is_read_by_them() {
    let mut d = Dashboard::new("/tmp/unused.sock");
    let mut key = gpt(T0);
    for b in &mut key.buckets {
        (b.dimension_code, b.period_code, b.source_code) = (0, 0, 0);
    }
    key.buckets[0].source = "headers".into();
    d.apply_status(status(T0, vec![key]), Instant::now());
    let text = render_text(&d, 200, 40);
    assert!(text.contains("req/min"), "{text}");
    assert!(text.contains("from headers"), "{text}");
    assert!(!text.contains("unknown"), "{text}");
}

#[test]
fn a_keys_plan_windows_show_as_gauges_with_their_reset_and_a_closed_one_says_so() {
    let mut d = Dashboard::new("/tmp/unused.sock");
    let mut k = opus(T0, 0, 0);
    k.plan_windows = vec![
        pb::PlanWindow {
            name: "5h".into(),
            label: "5-hour window".into(),
            used: 1.0,
            resets_at_unix_ms: T0 + 80 * 60_000,
            closed: true,
            binding: true,
            ..Default::default()
        },
        pb::PlanWindow {
            name: "7d".into(),
            label: "7-day window".into(),
            used: 0.41,
            resets_at_unix_ms: T0 + 3 * 86_400_000,
            ..Default::default()
        },
    ];
    d.apply_status(status(T0, vec![k]), Instant::now());
    select(&mut d, "anthropic/org-a/opus");
    let text = screen(&d, 140, 40).backend().to_string();
    let five = text
        .lines()
        .find(|l| l.contains("plan 5h"))
        .unwrap_or_else(|| panic!("a 5-hour line:\n{text}"));
    assert!(
        five.contains("100%") && five.contains("resets in") && five.contains("CLOSED"),
        "{five}"
    );
    let seven = text
        .lines()
        .find(|l| l.contains("plan 7d"))
        .unwrap_or_else(|| panic!("a 7-day line:\n{text}"));
    assert!(
        seven.contains("41%") && !seven.contains("CLOSED"),
        "{seven}"
    );
}
