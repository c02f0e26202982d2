//! The selected key's history as line charts, with the limit drawn as a line: requests/s,
//! tokens/min reserved and used, 429s and fallbacks per minute, queue wait p50/p95. Drawn when
//! the pane has room; a small pane keeps the one-row sparklines.

use super::{format, label};
use crate::state::{ChartLine, History};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType};
use ratatui::Frame;

/// The smallest pane the charts are drawn in (else: sparklines).
pub const MIN_WIDTH: u16 = 50;
pub const MIN_HEIGHT: u16 = 24;

struct Series {
    name: &'static str,
    line: ChartLine,
    color: Color,
    /// A limit: drawn dim, and only when there is one.
    limit: bool,
}

struct ChartSpec {
    title: &'static str,
    series: &'static [Series],
    unit: fn(f64) -> String,
}

const CHARTS: [ChartSpec; 4] = [
    ChartSpec {
        title: "requests/s",
        series: &[
            Series {
                name: "granted",
                line: ChartLine::RequestsPerSecond,
                color: Color::Cyan,
                limit: false,
            },
            Series {
                name: "limit",
                line: ChartLine::RequestsLimit,
                color: Color::DarkGray,
                limit: true,
            },
        ],
        unit: format::rate,
    },
    ChartSpec {
        title: "tokens/min",
        series: &[
            Series {
                name: "reserved",
                line: ChartLine::TokensReservedPerMinute,
                color: Color::Blue,
                limit: false,
            },
            Series {
                name: "used",
                line: ChartLine::TokensUsedPerMinute,
                color: Color::Green,
                limit: false,
            },
            Series {
                name: "limit",
                line: ChartLine::TokensLimit,
                color: Color::DarkGray,
                limit: true,
            },
        ],
        unit: format::count,
    },
    ChartSpec {
        title: "429s, fallbacks /min",
        series: &[
            Series {
                name: "429s",
                line: ChartLine::RateLimitedPerMinute,
                color: Color::Yellow,
                limit: false,
            },
            Series {
                name: "fallbacks",
                line: ChartLine::FallbacksPerMinute,
                color: Color::Red,
                limit: false,
            },
        ],
        unit: format::rate,
    },
    ChartSpec {
        title: "queue wait",
        series: &[
            Series {
                name: "p50",
                line: ChartLine::WaitP50,
                color: Color::Magenta,
                limit: false,
            },
            Series {
                name: "p95",
                line: ChartLine::WaitP95,
                color: Color::LightMagenta,
                limit: false,
            },
        ],
        unit: |ms| format::millis(ms as i64),
    },
];

/// "1m", "5m", "15m".
fn window_word(window_ms: i64) -> String {
    format!("{}m", window_ms / 60_000)
}

/// Draws the four charts in `area` (two by two when wide, else stacked).
pub fn render(frame: &mut Frame, area: Rect, history: &History, window_ms: i64) {
    let cells: Vec<Rect> = if area.width >= 2 * MIN_WIDTH {
        let [top, bottom] =
            Layout::vertical([Constraint::Fill(1), Constraint::Fill(1)]).areas(area);
        let [a, b] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(top);
        let [c, d] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(bottom);
        vec![a, b, c, d]
    } else {
        Layout::vertical([Constraint::Fill(1); 4])
            .split(area)
            .to_vec()
    };
    let window_s = window_ms as f64 / 1000.0;
    for (spec, cell) in CHARTS.iter().zip(cells) {
        let data: Vec<(&Series, Vec<(f64, f64)>)> = spec
            .series
            .iter()
            .map(|s| (s, history.points(s.line, window_ms)))
            .filter(|(s, pts)| !s.limit || pts.iter().any(|p| p.1 > 0.0))
            .collect();
        let top = data
            .iter()
            .flat_map(|(_, pts)| pts.iter().map(|p| p.1))
            .fold(0.0_f64, f64::max);
        let y_max = if top > 0.0 { top * 1.1 } else { 1.0 };
        let datasets: Vec<Dataset> = data
            .iter()
            .map(|(s, pts)| {
                Dataset::default()
                    .name(s.name)
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Line)
                    .style(Style::new().fg(s.color))
                    .data(pts)
            })
            .collect();
        let now_value = data
            .first()
            .and_then(|(_, pts)| pts.last())
            .map_or(String::new(), |p| format!(" {} now", (spec.unit)(p.1)));
        let title = Line::from(vec![
            Span::from(format!(" {}", spec.title)),
            label(format!("{now_value} ")),
        ]);
        let chart = Chart::new(datasets)
            .block(Block::bordered().title(title))
            .x_axis(
                Axis::default()
                    .bounds([-window_s, 0.0])
                    .labels([format!("-{}", window_word(window_ms)), "now".into()])
                    .style(Style::new().fg(Color::DarkGray)),
            )
            .y_axis(
                Axis::default()
                    .bounds([0.0, y_max])
                    .labels(["0".to_string(), (spec.unit)(y_max)])
                    .style(Style::new().fg(Color::DarkGray)),
            )
            .legend_position(Some(ratatui::widgets::LegendPosition::TopLeft))
            .hidden_legend_constraints((Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)));
        frame.render_widget(chart, cell);
    }
}
