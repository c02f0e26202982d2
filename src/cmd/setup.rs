//! Setting llmctl up: a config checked exactly as the daemon would check it, shell completions,
//! the manual page.

use crate::exit;
use clap::{Args, CommandFactory, Subcommand};
use llmctl_daemon::config::Config;
use llmctl_daemon::engine::Engine;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Parse and check a config file as `llmctl daemon` would, and print the limits per key
    Check(CheckArgs),
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The file [default: the daemon's: $XDG_CONFIG_HOME/llmctl/config.toml when it exists, else
    /// the embedded defaults]
    file: Option<PathBuf>,
    /// The file, as `llmctl daemon`, `proxy` and `exec` take it (the same as FILE)
    #[arg(long = "config", value_name = "FILE", conflicts_with = "file")]
    config: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in
    shell: clap_complete::Shell,
}

pub fn config(c: ConfigCommand) -> ExitCode {
    match c {
        ConfigCommand::Check(args) => check(args),
    }
}

fn check(args: CheckArgs) -> ExitCode {
    let env = |k: &str| std::env::var(k).ok();
    let path = args
        .file
        .or(args.config)
        .or_else(|| llmctl_daemon::paths::config_file(&env).filter(|p| p.exists()));
    let config = match &path {
        Some(p) => match Config::load(p) {
            Ok(c) => c,
            Err(e) => return exit::fail(exit::USAGE, e),
        },
        None => Config::default(),
    };
    // What the daemon checks when it starts: profiles, route groups and keys against the engine.
    let now = llmctl_daemon::server::now();
    let mut engine = match Engine::new(config.engine_config(), config.keys.clone(), now, 0) {
        Ok(e) => e,
        Err(e) => return exit::fail(exit::USAGE, format!("config: {e}")),
    };
    // The [proxy] table, as `llmctl proxy` reads it.
    let proxy = match &path {
        Some(p) => match llmctl_proxy::ProxyConfig::load(p) {
            Ok(c) => c,
            Err(e) => return exit::fail(exit::USAGE, e),
        },
        None => llmctl_proxy::ProxyConfig::default(),
    };
    match &path {
        Some(p) => println!("{}: ok", p.display()),
        None => println!("no config file: the embedded defaults (no configured keys)"),
    }
    for k in engine.status(now) {
        let mut parts: Vec<String> = k
            .buckets
            .iter()
            .map(|b| {
                format!(
                    "{} {}/{} (burst {})",
                    b.bucket.dimension,
                    b.bucket.limit,
                    b.bucket.period.as_str(),
                    b.bucket.capacity
                )
            })
            .collect();
        if k.max_concurrency > 0 {
            parts.push(format!("concurrency {}", k.max_concurrency));
        }
        if let Some(p) = k.provider {
            parts.push(format!("provider {}", p.as_str()));
        }
        parts.push(format!(
            "output counted as {}",
            k.output_counted_as.as_str()
        ));
        if !k.ancestors.is_empty() {
            parts.push(format!("also counts on {}", k.ancestors.join(", ")));
        }
        println!("{}  {}", k.key, parts.join("  "));
    }
    for u in proxy.upstreams.values() {
        println!(
            "proxy /{}  -> {}  api {}  keys {}/MODEL",
            u.name,
            u.url,
            u.api.as_str(),
            u.key
        );
    }
    ExitCode::SUCCESS
}

pub fn completions<C: CommandFactory>(args: CompletionsArgs) -> ExitCode {
    let mut command = C::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "llmctl", &mut script);
    print_all(&script, "the completion script")
}

/// Writes `bytes` to stdout: quietly ended by a closed pipe, any other failure said.
fn print_all(bytes: &[u8], what: &str) -> ExitCode {
    use std::io::Write;
    match std::io::stdout().lock().write_all(bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::closed_pipe(),
        Err(e) => exit::fail(exit::SOFTWARE, format!("cannot write {what}: {e}")),
    }
}

pub fn man<C: CommandFactory>() -> ExitCode {
    let mut page = Vec::new();
    match clap_mangen::Man::new(C::command()).render(&mut page) {
        Ok(()) => print_all(&page, "the manual page"),
        Err(e) => exit::fail(exit::SOFTWARE, format!("cannot write the manual page: {e}")),
    }
}
