//! Drawing the dashboard with ratatui, and mapping keys to actions.

mod charts;
mod clients;
mod detail;
pub mod format;
mod header;
mod help;
pub mod input;
mod keys;

use crate::state::Dashboard;
use ratatui::backend::TestBackend;
use ratatui::buffer::{Buffer, CellWidth};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Style, Stylize};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::{Frame, Terminal};

/// Lines the detail pane wants below the table when the terminal has room.
const DETAIL_HEIGHT: u16 = 13;

/// Draws one frame of the dashboard.
pub fn draw(frame: &mut Frame, d: &Dashboard) {
    let area = frame.area();
    let banner = header::banner(d);
    let [top, banner_area, body, footer] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(u16::from(banner.is_some())),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    header::render(frame, top, d);
    if let Some(line) = banner {
        frame.render_widget(Paragraph::new(line), banner_area);
    }
    frame.render_widget(Paragraph::new(header::footer(d)), footer);

    if d.status().is_none() {
        let waiting = Line::from(" no figures yet").dim();
        frame.render_widget(Paragraph::new(waiting), body);
    } else {
        let rows = d.rows();
        let wanted = rows.len() as u16 + 1;
        let room = body
            .height
            .saturating_sub(DETAIL_HEIGHT)
            .max(body.height / 3);
        let table_height = wanted.clamp(2, room.max(2)).min(body.height);
        let [table, detail] =
            Layout::vertical([Constraint::Length(table_height), Constraint::Fill(1)]).areas(body);
        keys::render(frame, table, d, &rows);
        if detail.height >= 4 {
            if d.clients() {
                clients::render(frame, detail, d);
            } else {
                detail::render(frame, detail, d);
            }
        }
    }
    if d.help() {
        help::render(frame, area);
    }
}

/// One frame as plain text, `width` x `height`: what `llmctl top --once` prints.
pub fn render_text(d: &Dashboard, width: u16, height: u16) -> String {
    let Ok(mut terminal) = Terminal::new(TestBackend::new(width, height));
    let Ok(_) = terminal.draw(|f| draw(f, d));
    buffer_text(terminal.backend().buffer())
}

/// The buffer's symbols, row by row, without trailing blanks.
pub fn buffer_text(buffer: &Buffer) -> String {
    let width = buffer.area.width.max(1) as usize;
    let mut lines = Vec::new();
    for row in buffer.content.chunks(width) {
        let mut line = String::new();
        let mut covered: u16 = 0;
        for cell in row {
            if covered == 0 {
                line.push_str(cell.symbol());
            }
            // A wide symbol covers the cells after it.
            covered = covered.max(cell.cell_width()).saturating_sub(1);
        }
        lines.push(line.trim_end().to_string());
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

/// Words that name a figure, dimmer than the figure.
fn label<'a>(text: impl Into<std::borrow::Cow<'a, str>>) -> ratatui::text::Span<'a> {
    ratatui::text::Span::styled(text, Style::new().dim())
}

#[cfg(test)]
mod tests;
