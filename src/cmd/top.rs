//! `llmctl top`: the live dashboard, or one plain-text frame with `--once`.

use super::connect;
use crate::exit;
use clap::Args;
use llmctl_client::pb;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct TopArgs {
    /// How often the daemon sends fresh figures
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = super::duration)]
    interval: Duration,
    /// Print one plain-text frame and exit (for scripts and bug reports)
    #[arg(long)]
    once: bool,
    /// Only keys starting with this
    #[arg(long, value_name = "PREFIX", default_value = "")]
    prefix: String,
}

pub async fn run(args: TopArgs, socket: PathBuf) -> ExitCode {
    if args.once {
        return once(socket, args.prefix).await;
    }
    if !std::io::stdout().is_terminal() {
        return exit::fail(
            exit::USAGE,
            "llmctl top draws on a terminal and stdout is not one; use `llmctl top --once` for plain text",
        );
    }
    let options = llmctl_tui::Options {
        socket,
        interval: args.interval,
        key_prefix: args.prefix,
    };
    match llmctl_tui::run(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => exit::fail(exit::SOFTWARE, e),
    }
}

async fn once(socket: PathBuf, key_prefix: String) -> ExitCode {
    let mut client = match connect(&socket).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut status = match client.status(pb::StatusRequest { key_prefix }).await {
        Ok(r) => r.into_inner(),
        Err(s) => return exit::status(&s),
    };
    llmctl_proto::text::clean_status(&mut status);
    println!(
        "{}",
        llmctl_tui::once_text(status, &socket.display().to_string())
    );
    ExitCode::SUCCESS
}
