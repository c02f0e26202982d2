//! `llmctl`: the daemon and the command line that talks to it.

mod cmd;
mod exit;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "llmctl",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("LLMCTL_GIT_REV"), ")"),
    about = "One scheduler per host for every process's LLM API calls",
    long_about = "llmctl runs one daemon per host that owns the LLM API quotas every process shares. \
                  Processes acquire before each provider call and report after it; the daemon keeps \
                  the shared token buckets, cooldowns and provider headers."
)]
pub struct Cli {
    /// The daemon's Unix socket [default: $XDG_RUNTIME_DIR/llmctl/llmctl.sock, else /tmp/llmctl-$UID/llmctl.sock]
    #[arg(long, global = true, env = "LLMCTL_SOCKET", value_name = "PATH")]
    socket: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the daemon in the foreground
    Daemon(cmd::daemon::DaemonArgs),
    /// Ask for a lease on a key; prints the lease id (exit 75 when not granted in time)
    Acquire(cmd::lease::AcquireArgs),
    /// Settle a lease with the provider's answer; prints the advice
    Report(cmd::lease::ReportArgs),
    /// Stop granting on a key (and the keys below it) for a while
    Cooldown(cmd::lease::CooldownArgs),
    /// Forget what a key learned (limits from headers and probing), its debt, cooldown and breaker
    Reset(cmd::lease::ResetArgs),
    /// Set a run's budget: past it, acquire is refused with reason run_budget
    RunBudget(cmd::lease::RunBudgetArgs),
    /// Show every key's limits, levels, queue and cooldown
    Status(cmd::status::StatusArgs),
    /// One short line for a status line or prompt: plan windows' use and reset, 429s a minute (--json for scripts)
    Statusline(cmd::statusline::StatuslineArgs),
    /// Claim an idempotency key: CLAIMED (exit 0), PENDING (exit 75) or DONE (exit 3, result on stdout)
    Claim(cmd::claim::ClaimArgs),
    /// Store the result of claimed work (from --result or stdin)
    Complete(cmd::claim::CompleteArgs),
    /// A live dashboard of every key: limits, queue, 429s, cooldowns (--once: one plain frame)
    Top(cmd::top::TopArgs),
    /// Measure Acquire and Acquire+Report latency and throughput against an empty call
    Bench(cmd::bench::BenchArgs),
    /// Serve a fake LLM provider on loopback: OpenAI and Anthropic shapes, limits, 429s, faults
    FakeProvider(cmd::fake::FakeArgs),
    /// A temporary daemon, fake providers and clients under load, watched with top; all removed on exit
    Demo(cmd::demo::DemoArgs),
    /// Serve the providers' own HTTP APIs on loopback, every call limited by the daemon (for tools that take a base URL)
    Proxy(cmd::proxy::ProxyArgs),
    /// Run a command with OPENAI_BASE_URL, ANTHROPIC_BASE_URL and Gemini's pointed at an llmctl proxy
    Exec(cmd::proxy::ExecArgs),
    /// Run the same jobs through llmctl and the usual retry recipes against a fake provider
    Simulate(cmd::simulate::SimulateArgs),
    /// Check a config file as the daemon would, and print the limits it sets (exit 64 when bad)
    #[command(subcommand)]
    Config(cmd::setup::ConfigCommand),
    /// Print a shell completion script: bash, zsh or fish
    Completions(cmd::setup::CompletionsArgs),
    /// Print the manual page (roff) of llmctl
    Man,
    /// One simulated client process (started by simulate)
    #[command(hide = true)]
    SimulateWorker,
    /// The real Codex, pointed at the proxy (run by the `codex` shim `exec` puts on PATH)
    #[command(hide = true)]
    CodexShim(cmd::proxy::CodexShimArgs),
}

fn main() -> ExitCode {
    exit::quiet_on_closed_pipe();
    let cli = Cli::parse();
    let socket = cli
        .socket
        .unwrap_or_else(|| llmctl_daemon::paths::socket_path(&|k| std::env::var(k).ok()));
    // A status line runs a new process at every redraw: one thread starts soonest.
    let mut builder = match cli.command {
        Command::Statusline(_) => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            return exit::fail(
                exit::SOFTWARE,
                format!("cannot start the async runtime: {e}"),
            )
        }
    };
    runtime.block_on(async move {
        match cli.command {
            Command::Daemon(args) => cmd::daemon::run(args, socket).await,
            Command::Acquire(args) => cmd::lease::acquire(args, socket).await,
            Command::Report(args) => cmd::lease::report(args, socket).await,
            Command::Config(c) => cmd::setup::config(c),
            Command::Completions(args) => cmd::setup::completions::<Cli>(args),
            Command::Man => cmd::setup::man::<Cli>(),
            Command::Cooldown(args) => cmd::lease::cooldown(args, socket).await,
            Command::Reset(args) => cmd::lease::reset(args, socket).await,
            Command::Status(args) => cmd::status::run(args, socket).await,
            Command::Statusline(args) => cmd::statusline::run(args, socket).await,
            Command::RunBudget(args) => cmd::lease::run_budget(args, socket).await,
            Command::Top(args) => cmd::top::run(args, socket).await,
            Command::Bench(args) => cmd::bench::run(args, socket).await,
            Command::Claim(args) => cmd::claim::claim(args, socket).await,
            Command::Complete(args) => cmd::claim::complete(args, socket).await,
            Command::FakeProvider(args) => cmd::fake::run(args).await,
            Command::Simulate(args) => cmd::simulate::run(args).await,
            Command::Demo(args) => cmd::demo::run(args).await,
            Command::Proxy(args) => cmd::proxy::proxy(args, socket).await,
            Command::Exec(args) => cmd::proxy::exec(args, socket).await,
            Command::SimulateWorker => cmd::simulate::worker().await,
            Command::CodexShim(args) => cmd::proxy::codex_shim(args),
        }
    })
}
