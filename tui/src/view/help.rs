//! The help overlay: keys, then what the columns and marks mean.

use super::label;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Stylize;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use ratatui::Frame;

const KEYS: [(&str, &str); 8] = [
    ("q Esc", "quit"),
    ("↑↓ k j", "select a key"),
    ("s", "sort: name, 429s, req/s, wait p95, queue, usage"),
    ("/", "filter keys by name (Enter keeps it, Esc clears)"),
    ("p", "pause the figures (the stream keeps running)"),
    (
        "c",
        "who spends the quota: clients and runs, most tokens first",
    ),
    ("t", "charts over the last 1, 5 or 15 minutes"),
    ("?", "show or hide this help"),
];

const COLUMNS: [(&str, &str); 9] = [
    (
        "REQ TOK",
        "share in use of the tightest requests / tokens bucket",
    ),
    ("FLIGHT", "requests in flight / max concurrency"),
    ("Q", "callers waiting in the daemon"),
    ("WAIT", "queue wait p50 / p95"),
    ("429/m", "provider 429s in the last minute"),
    (
        "RSV/USED",
        "tokens reserved / used since the daemon started",
    ),
    ("COOL FB/m", "cooldown left, fallbacks per minute"),
    ("C", "in cooldown: nothing is granted on the key"),
    ("!", "429s within the last 30 s"),
];

pub fn render(frame: &mut Frame, screen: Rect) {
    let mut lines = Vec::new();
    for (key, what) in KEYS {
        lines.push(Line::from(vec![
            Span::from(format!(" {key:<10}")).bold(),
            Span::from(what),
        ]));
    }
    lines.push(Line::from(""));
    for (column, what) in COLUMNS {
        lines.push(Line::from(vec![
            Span::from(format!(" {column:<10}")).bold(),
            label(what),
        ]));
    }
    let width = screen.width.saturating_sub(2).min(70);
    let height = screen.height.min(lines.len() as u16 + 2);
    let area = screen.centered(Constraint::Length(width), Constraint::Length(height));
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(" help: ? or Esc to close ")),
        area,
    );
}
