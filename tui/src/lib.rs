//! `llmctl top`: a live dashboard of the daemon, fed by its Watch stream.
//!
//! `state` holds what is known (updated from Watch messages, tested without a terminal),
//! `view` draws it with ratatui and maps keys to actions, `app` runs the loop, `feed` keeps the
//! Watch stream going across daemon restarts, `terminal` restores the terminal on every exit.

pub mod app;
pub mod feed;
pub mod state;
pub mod terminal;
pub mod view;

pub use app::{once_text, run, Options, TopError};

#[cfg(test)]
mod fixtures;
