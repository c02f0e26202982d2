//! The table: one row per key.

use super::format;
use crate::state::{Alert, Dashboard, KeyRow};
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::widgets::{Cell, HighlightSpacing, Row, Table, TableState};
use ratatui::Frame;

const HEADER: [&str; 11] = [
    "",
    "KEY",
    "REQ",
    "TOK",
    "FLIGHT",
    "Q",
    "WAIT 50/95",
    "429/m",
    "RSV/USED",
    "COOL",
    "FB/m",
];

/// The key column is as wide as the longest key (or the room left); every figure column is as
/// wide as its widest text or its header, so no figure or unit is cut.
fn widths(longest_key: u16, texts: &[[String; 11]]) -> [Constraint; 11] {
    let mut w = [0u16; 11];
    for (i, h) in HEADER.iter().enumerate() {
        w[i] = h.chars().count() as u16;
    }
    for row in texts {
        for (i, t) in row.iter().enumerate() {
            w[i] = w[i].max(t.chars().count().min(u16::MAX as usize) as u16);
        }
    }
    let mut out = w.map(Constraint::Length);
    out[0] = Constraint::Length(1);
    out[1] = Constraint::Max(longest_key.max(12));
    out
}

pub fn alert_style(alert: Alert) -> Style {
    match alert {
        Alert::Cooldown => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        Alert::Rising429s => Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        Alert::None => Style::new(),
    }
}

fn flag(alert: Alert) -> &'static str {
    match alert {
        Alert::Cooldown => "C",
        Alert::Rising429s => "!",
        Alert::None => " ",
    }
}

/// The texts of a key's row, in column order.
fn texts(r: &KeyRow<'_>) -> [String; 11] {
    let k = r.status;
    let flight = if k.max_concurrency > 0 {
        format!("{}/{}", k.in_flight, k.max_concurrency)
    } else {
        k.in_flight.to_string()
    };
    let wait = format!(
        "{}/{}",
        format::millis(k.queue_wait_p50_ms),
        format::millis(k.queue_wait_p95_ms)
    );
    let cooldown = if r.cooldown_left.is_zero() {
        String::new()
    } else {
        format::millis(r.cooldown_left.as_millis() as i64)
    };
    [
        flag(r.alert).to_string(),
        k.key.clone(),
        format::percent(r.requests_used),
        format::percent(r.tokens_used),
        flight,
        k.queue_depth.to_string(),
        wait,
        format!("{:.0}", k.rate_limited_per_minute),
        format!(
            "{}/{}",
            format::count(k.tokens_reserved as f64),
            format::count(k.tokens_used as f64)
        ),
        cooldown,
        format!("{:.0}", k.fallbacks_per_minute),
    ]
}

fn row<'a>(r: &KeyRow<'a>, texts: [String; 11]) -> Row<'a> {
    let limited = r.status.rate_limited_per_minute > 0.0;
    let cells = texts.into_iter().enumerate().map(|(i, t)| {
        let cell = Cell::from(t);
        if i == 7 && limited {
            cell.style(Style::new().fg(Color::Yellow))
        } else {
            cell
        }
    });
    Row::new(cells.collect::<Vec<_>>()).style(alert_style(r.alert))
}

pub fn render(frame: &mut Frame, area: Rect, d: &Dashboard, rows: &[KeyRow<'_>]) {
    let header = Row::new(HEADER).style(Style::new().bold().underlined());
    let selected = d
        .selected()
        .and_then(|s| rows.iter().position(|r| r.status.key == s));
    let longest = rows
        .iter()
        .map(|r| r.status.key.chars().count())
        .max()
        .unwrap_or(0)
        .min(u16::MAX as usize) as u16;
    let texts: Vec<[String; 11]> = rows.iter().map(texts).collect();
    let widths = widths(longest, &texts);
    let table = Table::new(rows.iter().zip(texts).map(|(r, t)| row(r, t)), widths)
        .header(header)
        .column_spacing(1)
        .highlight_symbol(">")
        .highlight_spacing(HighlightSpacing::Always)
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    if rows.is_empty() {
        let note = if d.filter().is_empty() {
            " no keys yet: configure [keys.\"...\"] or acquire on one"
        } else {
            " no key matches the filter"
        };
        let [head, rest] =
            ratatui::layout::Layout::vertical([Constraint::Length(1), Constraint::Fill(1)])
                .areas(area);
        frame.render_widget(table, head);
        frame.render_widget(ratatui::text::Line::from(note).dim(), rest);
        return;
    }
    let mut state = TableState::new().with_selected(selected);
    frame.render_stateful_widget(table, area, &mut state);
}
