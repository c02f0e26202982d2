//! The daemon's TOML config: `[daemon]` settings and `[keys."name"]` limits. Unknown keys and
//! bad values are refused with a message naming the file, the key and the value.

use crate::engine::{
    Backoff, BreakerConfig, Condition, Dimension, EngineConfig, KeyLimits, OutputCounting, Period,
    Provider, Rate, RetryProfile, RouteGroup, RouteMember, RunBudget,
};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

mod fields;
pub mod fleet;
mod keys;
pub mod located;
mod policy;
mod raw;

use fields::Section;
use keys::key_limits;
use policy::{breaker, profile, route_group, run_budget};
use raw::*;

/// The example config shipped in the repository (and tested to parse).
pub const EXAMPLE: &str = include_str!("../../../config.example.toml");

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Invalid { path: String, message: String },
}

use crate::duration::parse as parse_duration;

/// `[daemon]` settings; each can also be given as a flag of `llmctl daemon`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DaemonSettings {
    pub lease_ttl: Option<Duration>,
    pub data_dir: Option<PathBuf>,
    pub socket_group: Option<String>,
    pub snapshot_interval: Option<Duration>,
    pub max_keys: Option<usize>,
    pub max_waiters: Option<usize>,
    pub max_leases: Option<usize>,
    pub cooldown_base: Option<Duration>,
    pub cooldown_max: Option<Duration>,
    pub transit_allowance: Option<Duration>,
    pub default_profile: Option<String>,
    pub max_runs: Option<usize>,
    /// Prometheus text on this address (a bare port means 127.0.0.1).
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// gRPC health (only) on this TCP address, for probes that cannot reach the Unix socket.
    pub health_addr: Option<std::net::SocketAddr>,
    /// How long a done claim (and the knowledge that claims were lost) is kept.
    pub claim_retention: Option<Duration>,
    /// Largest result a Complete may store, in bytes.
    pub max_claim_result: Option<usize>,
    pub breaker: BreakerConfig,
}

/// Defaults of the claim settings.
pub const DEFAULT_CLAIM_RETENTION: Duration = Duration::from_secs(7 * 86_400);
pub const DEFAULT_MAX_CLAIM_RESULT: usize = 1024 * 1024;
pub const MAX_CLAIM_RESULT_CEILING: i64 = 16 * 1024 * 1024;

impl DaemonSettings {
    /// `other`'s values win where given.
    pub fn overlay(&mut self, other: &DaemonSettings) {
        macro_rules! take {
            ($($f:ident),*) => { $( if other.$f.is_some() { self.$f = other.$f.clone(); } )* };
        }
        take!(
            lease_ttl,
            data_dir,
            socket_group,
            snapshot_interval,
            max_keys,
            max_waiters,
            max_leases,
            cooldown_base,
            cooldown_max,
            transit_allowance,
            default_profile,
            max_runs,
            metrics_addr,
            health_addr,
            claim_retention,
            max_claim_result
        );
    }

    pub fn snapshot_interval(&self) -> Duration {
        self.snapshot_interval.unwrap_or(Duration::from_millis(250))
    }

    pub fn claim_retention(&self) -> Duration {
        self.claim_retention.unwrap_or(DEFAULT_CLAIM_RETENTION)
    }

    pub fn max_claim_result(&self) -> usize {
        self.max_claim_result.unwrap_or(DEFAULT_MAX_CLAIM_RESULT)
    }
}

/// A parsed, checked config.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    pub daemon: DaemonSettings,
    pub keys: Vec<(String, KeyLimits)>,
    /// Configured profiles, beside (or replacing) the built-in interactive and batch.
    pub profiles: Vec<RetryProfile>,
    pub route_groups: Vec<RouteGroup>,
    pub run_budget: RunBudget,
    /// `[fleet]`: shared with daemons on other hosts through Redis; None: this host alone.
    pub fleet: Option<fleet::FleetSettings>,
}

impl Config {
    /// The engine's settings: defaults, then the file, then flags (already overlaid).
    pub fn engine_config(&self) -> EngineConfig {
        let d = EngineConfig::default();
        let mut profiles = d.profiles.clone();
        for p in &self.profiles {
            match profiles.iter_mut().find(|x| x.name == p.name) {
                Some(x) => *x = p.clone(),
                None => profiles.push(p.clone()),
            }
        }
        let s = &self.daemon;
        EngineConfig {
            lease_ttl: s.lease_ttl.unwrap_or(d.lease_ttl),
            max_keys: s.max_keys.unwrap_or(d.max_keys),
            max_waiters: s.max_waiters.unwrap_or(d.max_waiters),
            max_leases: s.max_leases.unwrap_or(d.max_leases),
            cooldown_base: s.cooldown_base.unwrap_or(d.cooldown_base),
            cooldown_max: s.cooldown_max.unwrap_or(d.cooldown_max),
            transit_allowance: s.transit_allowance.unwrap_or(d.transit_allowance),
            default_profile: s.default_profile.clone().unwrap_or(d.default_profile),
            max_runs: s.max_runs.unwrap_or(d.max_runs),
            breaker: s.breaker.clone(),
            profiles,
            route_groups: self.route_groups.clone(),
            run_budget: self.run_budget.clone(),
        }
    }

    /// Reads and checks a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Config::parse(&text, &path.display().to_string())
    }

    /// Parses config text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: origin.to_string(),
            message,
        };
        let raw: RawFile =
            toml::from_str(text).map_err(|e| invalid(located::describe(text, &e)))?;
        let daemon = daemon_settings(&raw.daemon).map_err(invalid)?;
        let mut keys = Vec::new();
        for (name, k) in &raw.keys {
            crate::engine::validate_key(name)
                .map_err(|e| invalid(format!("[keys.{name:?}]: {e}")))?;
            keys.push((
                name.clone(),
                key_limits(name, k, &daemon.breaker).map_err(invalid)?,
            ));
        }
        let profiles = raw
            .profiles
            .iter()
            .map(|(name, p)| profile(name, p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        let route_groups = raw
            .route_groups
            .iter()
            .map(|(name, g)| route_group(name, g))
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        let run_budget = match &raw.run_budget {
            Some(b) => run_budget(b).map_err(invalid)?,
            None => RunBudget::default(),
        };
        let fleet = raw
            .fleet
            .as_ref()
            .map(fleet::FleetSettings::from_raw)
            .transpose()
            .map_err(invalid)?;
        let config = Config {
            daemon,
            keys,
            profiles,
            route_groups,
            run_budget,
            fleet,
        };
        // Names that refer to each other (profiles, route group keys) are checked by the engine.
        let probe = crate::engine::Now {
            mono: std::time::Instant::now(),
            unix_ms: 0,
        };
        crate::engine::Engine::new(config.engine_config(), config.keys.clone(), probe, 0)
            .map_err(|e| invalid(e.to_string()))?;
        Ok(config)
    }
}

fn daemon_settings(d: &RawDaemon) -> Result<DaemonSettings, String> {
    let s = &Section::table("daemon");
    let size = |f: &str, v| s.count(f, v, 1, 10_000_000).map(|o| o.map(|n| n as usize));
    let settings = DaemonSettings {
        lease_ttl: s.duration("lease_ttl", &d.lease_ttl)?,
        data_dir: d.data_dir.clone(),
        socket_group: d.socket_group.clone(),
        snapshot_interval: s.duration("snapshot_interval", &d.snapshot_interval)?,
        max_keys: size("max_keys", d.max_keys)?,
        max_waiters: size("max_waiters", d.max_waiters)?,
        max_leases: size("max_leases", d.max_leases)?,
        cooldown_base: s.duration("cooldown_base", &d.cooldown_base)?,
        cooldown_max: s.duration("cooldown_max", &d.cooldown_max)?,
        default_profile: d.default_profile.clone(),
        max_runs: size("max_runs", d.max_runs)?,
        metrics_addr: d
            .metrics_addr
            .as_deref()
            .map(|a| {
                parse_metrics_addr(a).map_err(|e| s.error("metrics_addr", format_args!("{a:?}"), e))
            })
            .transpose()?,
        health_addr: d
            .health_addr
            .as_deref()
            .map(|a| {
                parse_metrics_addr(a).map_err(|e| s.error("health_addr", format_args!("{a:?}"), e))
            })
            .transpose()?,
        breaker: breaker(
            s,
            &RawBreaker {
                breaker_failure_rate: d.breaker_failure_rate,
                breaker_min_requests: d.breaker_min_requests,
                breaker_window: d.breaker_window.clone(),
                breaker_open_for: d.breaker_open_for.clone(),
            },
            &BreakerConfig::default(),
        )?,
        transit_allowance: s.duration("transit_allowance", &d.transit_allowance)?,
        claim_retention: s.duration("claim_retention", &d.claim_retention)?,
        max_claim_result: s
            .count(
                "max_claim_result",
                d.max_claim_result,
                0,
                MAX_CLAIM_RESULT_CEILING,
            )?
            .map(|n| n as usize),
    };
    for (field, v) in [
        ("lease_ttl", settings.lease_ttl),
        ("snapshot_interval", settings.snapshot_interval),
        ("claim_retention", settings.claim_retention),
    ] {
        if v == Some(Duration::ZERO) {
            return Err(s.error(field, "\"0s\"", "must be longer than zero"));
        }
    }
    Ok(settings)
}

/// `127.0.0.1:9464`, `[::1]:9464`, or a bare port on 127.0.0.1.
pub fn parse_metrics_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    let s = s.trim();
    if let Ok(port) = s.trim_start_matches(':').parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse()
        .map_err(|_| "not an address; write it like 127.0.0.1:9464 or 9464".to_string())
}

#[cfg(test)]
mod tests;
