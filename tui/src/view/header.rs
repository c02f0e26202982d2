//! The two header lines, the connection banner and the footer.

use super::format;
use super::label;
use crate::state::{Connection, Dashboard};
use ratatui::layout::Rect;
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

pub fn render(frame: &mut Frame, area: Rect, d: &Dashboard) {
    let mut first = vec![Span::from(" llmctl top").bold()];
    if let Some(up) = d.uptime() {
        first.push(label("  up "));
        first.push(Span::from(format::uptime(up)));
    }
    if let Some(n) = d.sessions() {
        first.push(label("  clients "));
        first.push(Span::from(n.to_string()));
    }
    first.push(label("  socket "));
    first.push(Span::from(d.socket().to_string()));
    if let Some(f) = d.fleet() {
        first.push(label("  fleet "));
        first.push(Span::from(format!("{} of {} hosts ", f.host, f.hosts)));
        first.push(if f.connected {
            Span::styled("connected", Style::new().fg(Color::Green))
        } else {
            Span::styled(
                "DEGRADED",
                Style::new().fg(Color::White).bg(Color::Red).bold(),
            )
        });
    }

    let t = d.totals();
    let rl_style = if t.rate_limited_per_minute > 0.0 {
        Style::new().fg(Color::Yellow).bold()
    } else {
        Style::new()
    };
    let mut second = vec![
        label(" req/s "),
        Span::from(format::rate(t.requests_per_second)),
        label("  429s/min "),
        Span::styled(format!("{:.0}", t.rate_limited_per_minute), rl_style),
        label("  queue "),
        Span::from(t.queue_depth.to_string()),
        label("  in flight "),
        Span::from(t.in_flight.to_string()),
        label("  keys "),
        Span::from(t.keys.to_string()),
        label("  sort "),
        Span::from(d.sort().label()),
    ];
    if !d.filter().is_empty() && !d.editing_filter() {
        second.push(label("  filter "));
        second.push(Span::from(d.filter().to_string()));
    }
    if d.paused() {
        second.push(Span::from("  "));
        second.push(Span::from(" PAUSED ").reversed().bold());
    }
    frame.render_widget(
        Paragraph::new(vec![Line::from(first), Line::from(second)]),
        area,
    );
}

/// A line under the header when the dashboard is not live.
pub fn banner(d: &Dashboard) -> Option<Line<'static>> {
    match d.connection() {
        Connection::Connected => None,
        Connection::Connecting => Some(
            Line::from(format!(" connecting to {} …", d.socket()))
                .style(Style::new().fg(Color::Black).bg(Color::Yellow)),
        ),
        Connection::Disconnected { reason, retry_in } => Some(
            Line::from(if retry_in.is_zero() {
                format!(" disconnected — retrying now: {reason}")
            } else {
                format!(
                    " disconnected — retrying in {}: {reason}",
                    format::millis(retry_in.as_millis() as i64)
                )
            })
            .style(Style::new().fg(Color::White).bg(Color::Red).bold()),
        ),
    }
}

pub fn footer(d: &Dashboard) -> Line<'static> {
    if d.editing_filter() {
        return Line::from(vec![
            Span::from(" filter: ").bold(),
            Span::from(format!("{}▏", d.filter())),
            label("  Enter keep · Esc clear"),
        ]);
    }
    let mut spans = Vec::new();
    for (key, what) in [
        ("q", "quit"),
        ("↑↓", "select"),
        ("s", "sort"),
        ("/", "filter"),
        ("p", if d.paused() { "resume" } else { "pause" }),
        ("c", if d.clients() { "key" } else { "clients" }),
        ("?", "help"),
    ] {
        spans.push(Span::from(format!(" {key}")).bold());
        spans.push(label(format!(" {what} ")));
    }
    Line::from(spans)
}
