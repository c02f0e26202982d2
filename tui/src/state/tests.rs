use super::*;
use crate::fixtures::*;

fn dashboard_with(messages: impl IntoIterator<Item = pb::StatusResponse>) -> Dashboard {
    let mut d = Dashboard::new("/tmp/fallback.sock");
    let now = Instant::now();
    for m in messages {
        d.apply_status(m, now);
    }
    d
}

fn names(d: &Dashboard) -> Vec<String> {
    d.rows().iter().map(|r| r.status.key.clone()).collect()
}

fn traffic(seconds: i64) -> Vec<pb::StatusResponse> {
    (0..seconds)
        .map(|s| {
            let t = T0 + s * 1_000;
            status(t, vec![opus(t, 0, 0), idle(), gpt(t)])
        })
        .collect()
}

#[test]
fn before_any_message_it_is_connecting_with_no_rows() {
    let d = Dashboard::new("/tmp/x.sock");
    assert_eq!(d.connection(), &Connection::Connecting);
    assert!(d.rows().is_empty());
    assert_eq!(d.socket(), "/tmp/x.sock");
    assert_eq!(d.uptime(), None);
    assert_eq!(d.selected(), None);
}

#[test]
fn a_message_gives_rows_totals_uptime_clients_and_a_selection() {
    let d = dashboard_with([status(T0, vec![opus(T0, 0, 0), idle(), gpt(T0)])]);
    assert_eq!(d.connection(), &Connection::Connected);
    assert_eq!(
        names(&d),
        ["anthropic/org-a/opus", "local/llama", "openai/gpt-5.5"]
    );
    assert_eq!(d.socket(), "/run/user/1000/llmctl/llmctl.sock");
    assert_eq!(d.uptime(), Some(Duration::from_secs(3_723)));
    assert_eq!(d.sessions(), Some(3));
    let t = d.totals();
    assert_eq!(t.keys, 3);
    assert_eq!(t.requests_per_second, 8.5);
    assert_eq!(t.queue_depth, 7);
    assert_eq!(t.in_flight, 4);
    assert_eq!(d.selected(), Some("anthropic/org-a/opus"));
}

#[test]
fn usage_comes_from_the_tightest_bucket_of_each_kind() {
    let d = dashboard_with([status(T0, vec![opus(T0, 0, 0), idle(), gpt(T0)])]);
    let rows = d.rows();
    let gpt = rows
        .iter()
        .find(|r| r.status.key == "openai/gpt-5.5")
        .expect("gpt row");
    assert_eq!(gpt.requests_used, Some(0.4));
    assert_eq!(gpt.tokens_used, Some(0.225));
    let opus = &rows[0];
    assert_eq!(opus.requests_used, Some(1.0));
    assert_eq!(opus.tokens_used, Some(1.05), "debt shows above 100 %");
    assert_eq!(rows[1].requests_used, None, "no limits, no percentage");
}

#[test]
fn a_key_in_cooldown_stands_out_and_its_countdown_runs_between_messages() {
    let mut d = Dashboard::new("s");
    let t = Instant::now();
    d.apply_status(status(T0, vec![opus(T0, 4, 2_500), gpt(T0)]), t);
    assert_eq!(d.rows()[0].alert, Alert::Cooldown);
    assert_eq!(d.rows()[1].alert, Alert::None);
    d.tick(t + Duration::from_millis(1_000));
    assert_eq!(d.rows()[0].cooldown_left, Duration::from_millis(1_500));
    d.tick(t + Duration::from_millis(3_000));
    assert_eq!(d.rows()[0].cooldown_left, Duration::ZERO);
    assert_eq!(
        d.rows()[0].alert,
        Alert::Rising429s,
        "the cooldown is over but the 429s are recent"
    );
}

#[test]
fn rising_429s_are_judged_on_the_last_30_seconds() {
    let mut messages = traffic(3);
    let t = T0 + 3_000;
    messages.push(status(t, vec![opus(t, 2, 0), idle(), gpt(t)]));
    let mut d = dashboard_with(messages.clone());
    assert_eq!(d.rows()[0].alert, Alert::Rising429s);
    // 40 s later with no new 429: back to normal (the daemon's per-minute figure says 3 still).
    for s in 1..=40 {
        let t = T0 + 3_000 + s * 1_000;
        d.apply_status(
            status(t, vec![opus(t, 2, 0), idle(), gpt(t)]),
            Instant::now(),
        );
    }
    assert_eq!(d.rows()[0].alert, Alert::None);
    assert_eq!(
        d.history("anthropic/org-a/opus")
            .expect("history")
            .total(Metric::RateLimited),
        2
    );
}

#[test]
fn sort_cycles_through_every_order_and_back() {
    let mut d = dashboard_with([status(T0, vec![opus(T0, 3, 1_000), idle(), gpt(T0)])]);
    let mut seen = vec![d.sort()];
    for _ in 0..6 {
        d.handle(Action::CycleSort);
        seen.push(d.sort());
    }
    assert_eq!(seen.first(), seen.last());
    assert_eq!(seen[1], SortOrder::RateLimited);
    d.handle(Action::CycleSort);
    assert_eq!(d.sort(), SortOrder::RateLimited);
    assert_eq!(names(&d)[0], "anthropic/org-a/opus");
    d.handle(Action::CycleSort);
    assert_eq!(
        names(&d),
        ["openai/gpt-5.5", "anthropic/org-a/opus", "local/llama"]
    );
    d.handle(Action::CycleSort); // wait p95
    assert_eq!(names(&d)[0], "anthropic/org-a/opus");
}

#[test]
fn selection_follows_the_key_and_stops_at_the_ends() {
    let mut d = dashboard_with([status(T0, vec![opus(T0, 0, 0), idle(), gpt(T0)])]);
    d.handle(Action::SelectPrevious);
    assert_eq!(d.selected(), Some("anthropic/org-a/opus"));
    d.handle(Action::SelectNext);
    d.handle(Action::SelectNext);
    d.handle(Action::SelectNext);
    assert_eq!(d.selected(), Some("openai/gpt-5.5"));
    // Re-sorting moves the row, not the selection.
    d.handle(Action::CycleSort);
    d.handle(Action::CycleSort);
    assert_eq!(d.selected(), Some("openai/gpt-5.5"));
    assert_eq!(
        d.selected_row().map(|r| r.status.key.as_str()),
        Some("openai/gpt-5.5")
    );
}

#[test]
fn filter_narrows_rows_and_moves_a_hidden_selection() {
    let mut d = dashboard_with([status(T0, vec![opus(T0, 0, 0), idle(), gpt(T0)])]);
    d.handle(Action::StartFilter);
    assert!(d.editing_filter());
    for c in "GPT".chars() {
        d.handle(Action::FilterInput(c));
    }
    assert_eq!(names(&d), ["openai/gpt-5.5"], "case does not matter");
    assert_eq!(d.selected(), Some("openai/gpt-5.5"));
    d.handle(Action::FilterConfirm);
    assert!(!d.editing_filter());
    assert_eq!(d.filter(), "GPT");
    d.handle(Action::StartFilter);
    d.handle(Action::FilterBackspace);
    assert_eq!(d.filter(), "GP");
    d.handle(Action::FilterCancel);
    assert_eq!(d.filter(), "");
    assert_eq!(names(&d).len(), 3);
}

#[test]
fn pause_holds_messages_back_and_applies_the_newest_on_resume() {
    let mut d = dashboard_with(traffic(1));
    d.handle(Action::TogglePause);
    assert!(d.paused());
    let later = T0 + 5_000;
    d.apply_status(status(later, vec![gpt(later)]), Instant::now());
    d.apply_status(
        status(later + 1_000, vec![gpt(later + 1_000)]),
        Instant::now(),
    );
    assert_eq!(d.status().map(|s| s.now_unix_ms), Some(T0));
    assert_eq!(d.rows().len(), 3);
    d.handle(Action::TogglePause);
    assert_eq!(d.status().map(|s| s.now_unix_ms), Some(later + 1_000));
    assert_eq!(names(&d), ["openai/gpt-5.5"]);
    assert_eq!(d.selected(), Some("openai/gpt-5.5"));
    assert!(
        d.history("local/llama").is_none(),
        "gone keys drop their history"
    );
}

#[test]
fn the_disconnected_banner_counts_down() {
    let mut d = dashboard_with(traffic(1));
    let t = Instant::now();
    d.tick(t);
    d.set_connection(Connection::Disconnected {
        reason: "gone".into(),
        retry_in: Duration::from_secs(2),
    });
    d.tick(t + Duration::from_millis(500));
    assert!(matches!(
        d.connection(),
        Connection::Disconnected { retry_in, .. } if *retry_in == Duration::from_millis(1500)
    ));
    d.tick(t + Duration::from_secs(5));
    assert!(matches!(
        d.connection(),
        Connection::Disconnected { retry_in, .. } if retry_in.is_zero()
    ));
}

#[test]
fn help_quit_and_connection_state() {
    let mut d = dashboard_with(traffic(1));
    d.handle(Action::ToggleHelp);
    assert!(d.help());
    d.handle(Action::ToggleHelp);
    assert!(!d.help());
    d.set_connection(Connection::Disconnected {
        reason: "gone".into(),
        retry_in: Duration::from_secs(1),
    });
    assert!(matches!(d.connection(), Connection::Disconnected { .. }));
    assert_eq!(d.rows().len(), 3, "the last figures stay on screen");
    d.apply_status(status(T0 + 1_000, vec![gpt(T0 + 1_000)]), Instant::now());
    assert_eq!(d.connection(), &Connection::Connected);
    assert!(!d.should_quit());
    d.handle(Action::Quit);
    assert!(d.should_quit());
}

#[test]
fn history_keeps_one_sample_per_message_per_key_and_for_totals() {
    let d = dashboard_with(traffic(12));
    let h = d.history("openai/gpt-5.5").expect("history");
    assert_eq!(h.len(), 12);
    assert_eq!(h.total(Metric::TokensReserved), 11 * 9_000);
    assert_eq!(h.total(Metric::TokensUsed), 11 * 7_000);
    assert_eq!(d.totals_history().len(), 12);
}

#[test]
fn events_for_a_key_include_its_ancestors_and_descendants_newest_first() {
    let mut s = status(T0, vec![opus(T0, 1, 900), gpt(T0)]);
    s.events = vec![
        event(T0 - 9_000, "anthropic", "cooldown", "org-wide 429"),
        event(T0 - 5_000, "openai/gpt-5.5", "fallback", "to azure/gpt-5.5"),
        event(
            T0 - 1_000,
            "anthropic/org-a/opus",
            "give_up",
            "insufficient_quota",
        ),
        event(
            T0 - 500,
            "anthropic/org-ab",
            "cooldown",
            "a sibling, not an ancestor",
        ),
    ];
    let d = dashboard_with([s]);
    let kinds: Vec<&str> = d
        .events_for("anthropic/org-a/opus")
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    assert_eq!(kinds, ["give_up", "cooldown"]);
    assert_eq!(d.events_for("anthropic").len(), 3, "all three are below it");
}

#[test]
fn deep_debt_shows_at_most_999_percent() {
    let b = crate::fixtures::bucket("requests", 600.0, 2.0, -255.0);
    assert_eq!(super::bucket_used(&b), Some(MAX_USED));
    let b = crate::fixtures::bucket("requests", 600.0, 10.0, 6.0);
    assert_eq!(super::bucket_used(&b), Some(0.4));
}
