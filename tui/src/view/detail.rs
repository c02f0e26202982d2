//! The selected key in depth: buckets, figures, last headers, sparklines and recent events.

use super::keys::alert_style;
use super::{format, label};
use crate::state::{Alert, Dashboard, History, KeyRow, Metric};
use llmctl_proto::v1 as pb;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Sparkline, Wrap};
use ratatui::Frame;

/// Width of the names in front of bucket bars and sparklines.
const LABEL: usize = 11;

fn dimension_word(d: pb::Dimension) -> &'static str {
    match d {
        pb::Dimension::Requests => "req",
        pb::Dimension::Tokens => "tok",
        pb::Dimension::InputTokens => "in tok",
        pb::Dimension::OutputTokens => "out tok",
        pb::Dimension::Unspecified => "unknown",
    }
}

fn bucket_line(b: &pb::Bucket, width: usize) -> Line<'static> {
    let name = format!(
        "{}/{}",
        dimension_word(b.dimension_kind().unwrap_or_default()),
        format::period(b.period_kind().unwrap_or_default())
    );
    let used = crate::state::bucket_used(b);
    // A fixed width, so that the bars of every bucket line up.
    let figures = format!(
        " {:>4} {:<11}",
        format::percent(used),
        format!("{}/{}", format::count(b.level), format::count(b.capacity))
    );
    let mut tail = String::new();
    if width >= 60 {
        tail = format!(
            " left of {}/{}",
            format::count(b.limit),
            format::period(b.period_kind().unwrap_or_default())
        );
        match b.source_kind() {
            None | Some(pb::LimitSource::Config) => {}
            Some(s) => tail.push_str(&format!(" from {}", s.name())),
        }
        if b.configured_limit > 0.0 && b.configured_limit != b.limit {
            tail.push_str(&format!(" (cfg {})", format::count(b.configured_limit)));
        }
    }
    let bar_width = width
        .saturating_sub(LABEL + 1 + figures.chars().count() + tail.chars().count())
        .clamp(3, 30);
    let share = used.unwrap_or(0.0);
    let bar_style = if share >= 0.9 {
        Style::new().fg(Color::Red)
    } else if share >= 0.7 {
        Style::new().fg(Color::Yellow)
    } else {
        Style::new().fg(Color::Green)
    };
    Line::from(vec![
        label(format!("{name:<LABEL$} ")),
        Span::styled(format::bar(share, bar_width), bar_style),
        Span::from(figures),
        label(tail),
    ])
}

fn figures(r: &KeyRow<'_>) -> Vec<Line<'static>> {
    let k = r.status;
    let flight =
        if k.max_concurrency > 0 && k.concurrency_source_kind() == Some(pb::LimitSource::Aimd) {
            format!("{}/{} (learned)", k.in_flight, k.max_concurrency)
        } else if k.max_concurrency > 0 {
            format!("{}/{}", k.in_flight, k.max_concurrency)
        } else {
            format!("{} (no limit)", k.in_flight)
        };
    let mut lines = vec![
        Line::from(vec![
            label("in flight "),
            Span::from(flight),
            label("  queue "),
            Span::from(k.queue_depth.to_string()),
        ]),
        Line::from(vec![
            label("wait p50 "),
            Span::from(format::millis(k.queue_wait_p50_ms)),
            label("  p95 "),
            Span::from(format::millis(k.queue_wait_p95_ms)),
        ]),
        Line::from(vec![
            label("reserved "),
            Span::from(format::count(k.tokens_reserved as f64)),
            label(" used "),
            Span::from(format::count(k.tokens_used as f64)),
            label(" open "),
            Span::from(format::count(k.tokens_outstanding as f64)),
        ]),
        Line::from(vec![
            label("429s "),
            Span::styled(
                format!(
                    "{} ({:.0}/min)",
                    k.rate_limited_total, k.rate_limited_per_minute
                ),
                alert_style(if k.rate_limited_total > 0 {
                    Alert::Rising429s
                } else {
                    Alert::None
                }),
            ),
            label("  retries "),
            Span::from(k.retries_total.to_string()),
            label("  give-ups "),
            Span::from(k.give_ups_total.to_string()),
        ]),
        Line::from(vec![
            label("fallbacks "),
            Span::from(format!(
                "{} ({:.0}/min)",
                k.fallbacks_total, k.fallbacks_per_minute
            )),
            label("  requests "),
            Span::from(k.requests_total.to_string()),
            label("  cancelled "),
            Span::from(k.cancelled_total.to_string()),
        ]),
    ];
    if k.output_tokens_estimate > 0 {
        lines.push(Line::from(vec![
            label("no max_tokens: reserves "),
            Span::from(format::count(k.output_tokens_estimate as f64)),
            label(" output, reserved "),
            Span::from(format::count(k.undeclared_tokens_reserved as f64)),
            label(" used "),
            Span::from(format::count(k.undeclared_tokens_used as f64)),
        ]));
    }
    if k.fleet_shared {
        let mut spans = vec![
            label("fleet share "),
            Span::from(format!("{:.0} %", k.fleet_share * 100.0)),
        ];
        if k.fleet_slots >= 0 {
            spans.push(label("  slots "));
            spans.push(Span::from(k.fleet_slots.to_string()));
        }
        lines.push(Line::from(spans));
    }
    if !r.cooldown_left.is_zero() {
        lines.push(Line::from(vec![
            Span::styled(
                format!(
                    "{} {}",
                    if k.daily_quota.is_empty() {
                        "cooldown"
                    } else {
                        "daily quota"
                    },
                    format::millis(r.cooldown_left.as_millis() as i64)
                ),
                alert_style(Alert::Cooldown),
            ),
            Span::from(format!(": {}", k.cooldown_reason)),
        ]));
    }
    lines
}

/// A plan window as a gauge: `plan 5h  ██████░░  83% resets in 1h20m` (CLOSED while it
/// refuses).
fn window_line(w: &pb::PlanWindow, now_ms: Option<i64>, width: usize) -> Line<'static> {
    let name = format!("plan {}", w.name);
    let used = (w.used >= 0.0).then_some(w.used);
    let mut tail = String::new();
    if w.resets_at_unix_ms > 0 {
        match now_ms {
            Some(now) => tail = format!(" resets in {}", format::millis(w.resets_at_unix_ms - now)),
            None => tail = format!(" resets {}", llmctl_common::time::utc(w.resets_at_unix_ms)),
        }
    }
    if w.binding && width >= 60 {
        tail.push_str(" (binds)");
    }
    let figures = format!(" {:>4} ", format::percent(used));
    let bar_width = width
        .saturating_sub(LABEL + 1 + figures.chars().count() + tail.chars().count() + 7)
        .clamp(3, 30);
    let share = used.unwrap_or(0.0);
    let style = if w.closed || share >= 0.9 {
        Style::new().fg(Color::Red)
    } else if share >= 0.7 {
        Style::new().fg(Color::Yellow)
    } else {
        Style::new().fg(Color::Green)
    };
    let mut spans = vec![
        label(format!("{name:<LABEL$} ")),
        Span::styled(format::bar(share, bar_width), style),
        Span::from(figures),
        label(tail),
    ];
    if w.closed {
        spans.push(Span::styled(" CLOSED", alert_style(Alert::Cooldown)));
    }
    Line::from(spans)
}

fn left(r: &KeyRow<'_>, now_ms: Option<i64>, width: usize) -> Vec<Line<'static>> {
    let k = r.status;
    let mut lines: Vec<Line<'static>> = k.buckets.iter().map(|b| bucket_line(b, width)).collect();
    lines.extend(k.plan_windows.iter().map(|w| window_line(w, now_ms, width)));
    if k.buckets.is_empty() && k.plan_windows.is_empty() {
        lines.push(label("no limits known yet").into());
    }
    lines.extend(figures(r));
    if !k.last_headers.is_empty() {
        lines.push(label("last headers").into());
        let mut headers: Vec<_> = k.last_headers.iter().collect();
        headers.sort();
        for (name, value) in headers {
            lines.push(Line::from(vec![
                label(format!(" {name}: ")),
                Span::from(value.clone()),
            ]));
        }
    }
    lines
}

fn ago(now_ms: i64, at_ms: i64) -> String {
    format::millis(now_ms.saturating_sub(at_ms).max(0))
}

fn right(frame: &mut Frame, area: Rect, d: &Dashboard, r: &KeyRow<'_>) {
    let k = r.status;
    let mut y = area.y;
    let bottom = area.y + area.height;
    // One message makes no line: the charts and sparklines wait for a second one.
    if let Some(history) = d.history(&k.key).filter(|h| h.len() > 1) {
        if area.width >= super::charts::MIN_WIDTH && area.height >= super::charts::MIN_HEIGHT {
            // The charts take the pane but the last few rows, which show the recent events.
            let charts = area
                .height
                .saturating_sub(4)
                .max(super::charts::MIN_HEIGHT - 4);
            super::charts::render(
                frame,
                Rect::new(area.x, area.y, area.width, charts),
                history,
                d.chart_window_ms(),
            );
            y = area.y + charts;
        } else {
            y = sparklines(frame, area, k, history);
        }
    }
    if y >= bottom {
        return;
    }
    events(frame, Rect::new(area.x, y, area.width, bottom - y), d, k);
}

/// Draws the sparklines from the top of `area`; returns the first row left free.
fn sparklines(frame: &mut Frame, area: Rect, k: &pb::KeyStatus, history: &History) -> u16 {
    let value_width = 7;
    let mut y = area.y;
    let bottom = area.y + area.height;
    let span = format::millis(history.span_ms());
    frame.render_widget(
        Line::from(label(format!("last {span} (up to 15 min)"))),
        Rect::new(area.x, y, area.width, 1),
    );
    y += 1;
    let sparks = [
        (
            "req/s",
            Metric::RequestsPerSecond,
            format::rate(k.requests_per_second),
            Color::Cyan,
        ),
        (
            "429s",
            Metric::RateLimited,
            history.total(Metric::RateLimited).to_string(),
            Color::Yellow,
        ),
        (
            "wait p95",
            Metric::QueueWaitP95,
            format::millis(k.queue_wait_p95_ms),
            Color::Magenta,
        ),
        (
            "reserved",
            Metric::TokensReserved,
            format::count(history.total(Metric::TokensReserved) as f64),
            Color::Blue,
        ),
        (
            "used",
            Metric::TokensUsed,
            format::count(history.total(Metric::TokensUsed) as f64),
            Color::Green,
        ),
    ];
    let graph_width = area.width.saturating_sub(LABEL as u16 + 1 + value_width);
    for (name, metric, value, color) in sparks {
        if y >= bottom {
            break;
        }
        let [name_area, graph, value_area] = Layout::horizontal([
            Constraint::Length(LABEL as u16 + 1),
            Constraint::Length(graph_width),
            Constraint::Length(value_width),
        ])
        .areas(Rect::new(area.x, y, area.width, 1));
        frame.render_widget(Line::from(label(name)), name_area);
        frame.render_widget(
            Sparkline::default()
                .data(history.series(metric, graph_width as usize))
                .style(Style::new().fg(color)),
            graph,
        );
        frame.render_widget(Line::from(format!(" {value}")), value_area);
        y += 1;
    }
    y
}

/// The key's recent events, newest first, wrapped to the pane.
fn events(frame: &mut Frame, area: Rect, d: &Dashboard, k: &pb::KeyStatus) {
    let now = d.now_unix_ms().unwrap_or(0);
    let events = d.events_for(&k.key);
    let mut lines: Vec<Line> = vec![label("recent events").into()];
    if events.is_empty() {
        lines.push(label(" none").into());
    }
    for e in events {
        let kind = e.event_kind().unwrap_or_default();
        let kind_style = match kind {
            pb::EventKind::Cooldown | pb::EventKind::GiveUp => alert_style(Alert::Cooldown),
            pb::EventKind::Fallback | pb::EventKind::Breaker => alert_style(Alert::Rising429s),
            _ => Style::new(),
        };
        let mut spans = vec![
            label(format!("{:>6} ", ago(now, e.unix_ms))),
            Span::styled(kind.name(), kind_style),
        ];
        if e.key != k.key {
            spans.push(label(format!(" {}", e.key)));
        }
        spans.push(Span::from(format!(" {}", e.message)));
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}

pub fn render(frame: &mut Frame, area: Rect, d: &Dashboard) {
    let Some(r) = d.selected_row() else {
        return;
    };
    let mut title = vec![Span::from(format!(" {} ", r.status.key)).bold()];
    if r.alert == Alert::Cooldown {
        title.push(Span::styled("in cooldown ", alert_style(r.alert)));
    } else if r.alert == Alert::Rising429s {
        title.push(Span::styled("429s rising ", alert_style(r.alert)));
    }
    let block = Block::bordered()
        .title(Line::from(title))
        .border_style(alert_style(r.alert).remove_modifier(ratatui::style::Modifier::BOLD));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let split = inner.width >= 60;
    let [left_area, right_area] = if split {
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .spacing(1)
            .areas(inner)
    } else {
        [inner, Rect::default()]
    };
    frame.render_widget(
        Paragraph::new(left(&r, d.now_unix_ms(), left_area.width as usize))
            .wrap(Wrap { trim: false }),
        left_area,
    );
    if split {
        right(frame, right_area, d, &r);
    }
}
