//! The loop of `llmctl top`: wait for a key, a Watch message, a tick or a signal; update the
//! state; draw once.

use crate::feed::{self, FeedEvent};
use crate::state::{Connection, Dashboard};
use crate::terminal::TerminalGuard;
use crate::view;
use crossterm::event::{Event, EventStream};
use llmctl_proto::v1 as pb;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio::signal::unix::{signal, SignalKind};
use tokio_stream::StreamExt;

/// How often countdowns move between messages.
const TICK: Duration = Duration::from_millis(250);

#[derive(Debug, Error)]
pub enum TopError {
    #[error("cannot set up the terminal: {0}")]
    Terminal(std::io::Error),
    #[error("cannot draw on the terminal: {0}")]
    Draw(std::io::Error),
    #[error("cannot read the keyboard: {0}")]
    Input(std::io::Error),
    #[error("cannot listen for signals: {0}")]
    Signals(std::io::Error),
}

#[derive(Clone, Debug)]
pub struct Options {
    pub socket: PathBuf,
    /// How often the daemon sends its status.
    pub interval: Duration,
    /// Only keys starting with this; empty: every key.
    pub key_prefix: String,
}

/// Runs the dashboard until the operator quits or a signal asks it to stop.
pub async fn run(options: Options) -> Result<(), TopError> {
    let mut sigterm = signal(SignalKind::terminate()).map_err(TopError::Signals)?;
    let mut sigint = signal(SignalKind::interrupt()).map_err(TopError::Signals)?;
    let mut terminal = TerminalGuard::enter().map_err(TopError::Terminal)?;
    let mut dashboard = Dashboard::new(options.socket.display().to_string());
    let (mut feed, feed_task) = feed::spawn(options.socket, options.interval, options.key_prefix);
    let mut keys = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);

    let outcome = loop {
        if let Err(e) = terminal.draw(|f| view::draw(f, &dashboard)) {
            break Err(TopError::Draw(e));
        }
        tokio::select! {
            input = keys.next() => match input {
                Some(Ok(Event::Key(key))) => {
                    if let Some(action) = view::input::action(key, &dashboard) {
                        dashboard.handle(action);
                    }
                }
                // Resizes need nothing: the next draw fits the new size.
                Some(Ok(_)) => {}
                Some(Err(e)) => break Err(TopError::Input(e)),
                None => break Ok(()),
            },
            event = feed.recv() => match event {
                Some(FeedEvent::Status(status)) => dashboard.apply_status(*status, Instant::now()),
                Some(FeedEvent::Disconnected { reason, retry_in }) => {
                    dashboard.set_connection(Connection::Disconnected { reason, retry_in });
                }
                None => break Ok(()),
            },
            _ = tick.tick() => dashboard.tick(Instant::now()),
            _ = sigterm.recv() => break Ok(()),
            _ = sigint.recv() => break Ok(()),
        }
        if dashboard.should_quit() {
            break Ok(());
        }
    };
    feed_task.abort();
    drop(terminal);
    outcome
}

/// The size of a `--once` frame: the terminal's when printing to one, else 120x30; tall enough
/// for every key either way.
pub fn once_size(keys: usize) -> (u16, u16) {
    let (width, height) = if std::io::stdout().is_terminal() {
        crossterm::terminal::size().unwrap_or((120, 30))
    } else {
        (120, 30)
    };
    let wanted = (keys + 18).min(1_000) as u16;
    (width.max(40), height.max(wanted))
}

/// One frame of `status` as plain text.
pub fn once_text(status: pb::StatusResponse, socket: &str) -> String {
    let (width, height) = once_size(status.keys.len());
    let mut dashboard = Dashboard::new(socket);
    dashboard.apply_status(status, Instant::now());
    view::render_text(&dashboard, width, height)
}
