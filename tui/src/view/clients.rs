//! Who spends the quota: each client process and each run, most tokens first, with its
//! requests/s, tokens/min, in flight, queue and 429s. Shown instead of the detail (`c`).

use super::{format, label};
use crate::state::Dashboard;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Stylize;
use ratatui::text::Line;
use ratatui::widgets::{Block, Cell, Row, Table};
use ratatui::Frame;

/// A client or a run, as one row.
struct Spender {
    kind: &'static str,
    name: String,
    process: String,
    rps: f64,
    tpm: f64,
    in_flight: i64,
    queue: i64,
    refused: i64,
}

fn spenders(d: &Dashboard) -> Vec<Spender> {
    let Some(st) = d.status() else {
        return Vec::new();
    };
    let mut out: Vec<Spender> = st
        .clients
        .iter()
        .map(|c| Spender {
            kind: "client",
            name: c.client_id.clone(),
            process: if c.pid > 0 {
                let user = if !c.user.is_empty() {
                    c.user.clone()
                } else if c.uid >= 0 {
                    c.uid.to_string()
                } else {
                    "?".into()
                };
                let name = if c.process_name.is_empty() {
                    "?"
                } else {
                    &c.process_name
                };
                format!("{} {name} {user}", c.pid)
            } else {
                String::new()
            },
            rps: c.requests_per_second,
            tpm: c.tokens_per_minute,
            in_flight: c.in_flight,
            queue: c.queue_depth,
            refused: c.rate_limited_total,
        })
        .chain(st.runs.iter().map(|r| Spender {
            kind: "run",
            name: r.run_id.clone(),
            process: String::new(),
            rps: r.requests_per_second,
            tpm: r.tokens_per_minute,
            in_flight: r.in_flight,
            queue: r.queue_depth,
            refused: r.rate_limited_total,
        }))
        .collect();
    out.sort_by(|a, b| {
        b.tpm
            .total_cmp(&a.tpm)
            .then(b.rps.total_cmp(&a.rps))
            .then(a.name.cmp(&b.name))
    });
    out
}

pub fn render(frame: &mut Frame, area: Rect, d: &Dashboard) {
    let rows = spenders(d);
    let block = Block::bordered().title(Line::from(vec![
        " who spends the quota ".bold(),
        label("(c: back to the key) "),
    ]));
    if rows.is_empty() {
        let empty = ratatui::widgets::Paragraph::new(label(
            " no client has acquired yet (clients that send a client_id or run_id show here)",
        ))
        .block(block);
        frame.render_widget(empty, area);
        return;
    }
    let name_width = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 40) as u16;
    let process_width = rows
        .iter()
        .map(|r| r.process.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(7, 32) as u16;
    let header = Row::new(
        [
            "", "NAME", "PROCESS", "REQ/s", "TOK/min", "FLIGHT", "Q", "429s",
        ]
        .map(|h| Cell::from(h).bold()),
    );
    let table_rows = rows.iter().map(|r| {
        Row::new(vec![
            Cell::from(r.kind),
            Cell::from(r.name.clone()),
            Cell::from(r.process.clone()),
            Cell::from(format::rate(r.rps)),
            Cell::from(format::count(r.tpm)),
            Cell::from(r.in_flight.to_string()),
            Cell::from(r.queue.to_string()),
            Cell::from(r.refused.to_string()),
        ])
    });
    // The figures keep their width; names and processes give way on a narrow screen.
    let widths = [
        Constraint::Length(6),
        Constraint::Max(name_width),
        Constraint::Max(process_width),
        Constraint::Length(6),
        Constraint::Length(8),
        Constraint::Length(6),
        Constraint::Length(4),
        Constraint::Length(5),
    ];
    let table = Table::new(table_rows, widths).header(header).block(block);
    frame.render_widget(table, area);
}
