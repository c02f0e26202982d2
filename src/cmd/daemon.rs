//! `llmctl daemon`: config from the file (XDG or --config), then flags; runs until SIGINT/SIGTERM.

use crate::exit;
use clap::Args;
use llmctl_daemon::config::fleet::FleetSettings;
use llmctl_daemon::config::{Config, DaemonSettings};
use llmctl_daemon::server::{self, DaemonError, DaemonOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct DaemonArgs {
    /// Config file [default: $XDG_CONFIG_HOME/llmctl/config.toml, if it exists; else embedded defaults]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Where state is kept (sled) [default: $XDG_STATE_HOME/llmctl]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// An unreported lease is settled at its estimate after this [default: 10m]
    #[arg(long, value_name = "DUR", value_parser = super::duration)]
    lease_ttl: Option<Duration>,
    /// How often changed bucket levels are written [default: 250ms]
    #[arg(long, value_name = "DUR", value_parser = super::duration)]
    snapshot_interval: Option<Duration>,
    /// Most keys the daemon tracks [default: 10000]
    #[arg(long, value_name = "N")]
    max_keys: Option<usize>,
    /// Most callers waiting at once [default: 10000]
    #[arg(long, value_name = "N")]
    max_waiters: Option<usize>,
    /// Most leases outstanding at once [default: 100000]
    #[arg(long, value_name = "N")]
    max_leases: Option<usize>,
    /// First cooldown after a 429 that names no delay [default: 1s]
    #[arg(long, value_name = "DUR", value_parser = super::duration)]
    cooldown_base: Option<Duration>,
    /// Cap of the escalation on repeated 429s [default: 60s]
    #[arg(long, value_name = "DUR", value_parser = super::duration)]
    cooldown_max: Option<Duration>,
    /// The retry profile of leases that name none and whose key names none [default: batch]
    #[arg(long, value_name = "NAME")]
    default_profile: Option<String>,
    /// Most runs (run_id) tracked at once [default: 10000]
    #[arg(long, value_name = "N")]
    max_runs: Option<usize>,
    /// A bucket granted from full starts refilling after this (time to reach the provider) [default: 20ms]
    #[arg(long, value_name = "DUR", value_parser = super::duration)]
    transit_allowance: Option<Duration>,
    /// Serve Prometheus metrics on this address (a bare port means 127.0.0.1) [default: off]
    #[arg(long, value_name = "ADDR", value_parser = llmctl_daemon::config::parse_metrics_addr)]
    metrics_addr: Option<std::net::SocketAddr>,
    /// How long a done claim is kept, and claims stay suspect after the store lost records [default: 7d]
    #[arg(long, value_name = "DUR", value_parser = super::duration)]
    claim_retention: Option<Duration>,
    /// Largest claim result Complete stores, in bytes [default: 1048576]
    #[arg(long, value_name = "BYTES")]
    max_claim_result: Option<usize>,
    /// Serve gRPC health (only) on this TCP address, for probes such as Kubernetes' (a bare port means 127.0.0.1) [default: off]
    #[arg(long, value_name = "ADDR", value_parser = llmctl_daemon::config::parse_metrics_addr)]
    health_addr: Option<std::net::SocketAddr>,
    /// Let this group use the socket (socket 0660, folder 0750)
    #[arg(long, value_name = "GROUP")]
    socket_group: Option<String>,
    /// Share every key's limits with the daemons of other hosts through this Redis (redis://HOST:PORT/DB or unix:///path/redis.sock) [default: [fleet] redis, else off]
    #[arg(long, value_name = "URL")]
    fleet_redis: Option<String>,
    /// This host's name in the fleet [default: [fleet] host, else the hostname]
    #[arg(long, value_name = "NAME", requires = "fleet_redis")]
    fleet_host: Option<String>,
    /// Stop cleanly, state flushed, after this long with no session, lease, waiter or Watch
    /// (a daemon started for a laptop or a CI job leaves nothing running) [default: off]
    #[arg(long, value_name = "DUR", value_parser = idle_exit)]
    idle_exit: Option<Duration>,
}

/// `--idle-exit`: a duration, and not zero (a daemon that stops as it starts serves nobody).
fn idle_exit(s: &str) -> Result<Duration, String> {
    match super::duration(s)? {
        d if d.is_zero() => Err("--idle-exit 0 would stop the daemon as it starts; give a bound like 10m, or leave it out".into()),
        d => Ok(d),
    }
}

impl DaemonArgs {
    fn settings(&self) -> DaemonSettings {
        DaemonSettings {
            lease_ttl: self.lease_ttl,
            data_dir: self.data_dir.clone(),
            socket_group: self.socket_group.clone(),
            snapshot_interval: self.snapshot_interval,
            max_keys: self.max_keys,
            max_waiters: self.max_waiters,
            max_leases: self.max_leases,
            cooldown_base: self.cooldown_base,
            cooldown_max: self.cooldown_max,
            default_profile: self.default_profile.clone(),
            max_runs: self.max_runs,
            metrics_addr: self.metrics_addr,
            health_addr: self.health_addr,
            breaker: Default::default(),
            transit_allowance: self.transit_allowance,
            claim_retention: self.claim_retention,
            max_claim_result: self.max_claim_result,
        }
    }
}

/// SIGINT, SIGTERM or SIGQUIT: each stops the daemon cleanly, flushing its state. (SIGHUP
/// reloads the config instead.)
pub async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let wait = |kind: SignalKind| async move {
        match signal(kind) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = wait(SignalKind::terminate()) => {}
        _ = wait(SignalKind::quit()) => {}
    }
}

/// Logs to stderr, at the level RUST_LOG says (info by default); colours on a terminal only.
pub fn init_logging() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

pub async fn run(args: DaemonArgs, socket: PathBuf) -> ExitCode {
    init_logging();
    let env = |k: &str| std::env::var(k).ok();
    let path = match &args.config {
        Some(path) => Some(path.clone()),
        None => llmctl_daemon::paths::config_file(&env).filter(|p| p.exists()),
    };
    let settings = args.settings();
    let fleet_flags = (args.fleet_redis.clone(), args.fleet_host.clone());
    let read = {
        let path = path.clone();
        move || -> Result<Config, String> {
            let mut config = match &path {
                Some(p) => Config::load(p).map_err(|e| e.to_string())?,
                None => Config::default(),
            };
            config.daemon.overlay(&settings);
            if let (Some(url), host) = &fleet_flags {
                config.fleet = Some(FleetSettings::from_flags(
                    url,
                    host.as_deref(),
                    config.fleet.as_ref(),
                )?);
            }
            Ok(config)
        }
    };
    let config = match read() {
        Ok(c) => c,
        Err(e) => return exit::fail(exit::USAGE, e),
    };
    let reload = path.map(|_| server::Reload(std::sync::Arc::new(read)));
    let data_dir = config
        .daemon
        .data_dir
        .clone()
        .unwrap_or_else(|| llmctl_daemon::paths::data_dir(&env));
    let opts = DaemonOptions {
        socket,
        data_dir,
        metrics_addr: config.daemon.metrics_addr,
        config,
        reload,
        idle_exit: args.idle_exit,
    };
    match server::run(opts, stop_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(
            e @ (DaemonError::Socket(_) | DaemonError::Metrics { .. } | DaemonError::Health { .. }),
        ) => exit::fail(exit::CANTCREAT, e),
        // The data dir is another daemon's, or not a folder of this user.
        Err(e @ DaemonError::Store(llmctl_daemon::store::StoreError::DataDir(_))) => {
            exit::fail(exit::CANTCREAT, e)
        }
        Err(DaemonError::Store(e)) if e.is_locked() => exit::fail(exit::CANTCREAT, e),
        Err(e @ DaemonError::Unflushed { .. }) => exit::fail(exit::IOERR, e),
        Err(e @ DaemonError::Config(_)) => exit::fail(exit::USAGE, e),
        Err(e) => exit::fail(exit::SOFTWARE, e),
    }
}
