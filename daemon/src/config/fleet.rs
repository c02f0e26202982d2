//! `[fleet]`: daemons on many hosts share every key's limits through Redis.

use super::fields::Section;
use super::raw::RawFleet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How much of its own demand a host leases at once, unless `slice` says otherwise.
pub const DEFAULT_SLICE: Duration = Duration::from_secs(1);

/// The fleet this daemon belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetSettings {
    /// `redis://HOST:PORT/DB`, `rediss://…` or `unix:///path/redis.sock`, as given (checked).
    pub redis: String,
    /// The certificates (PEM) a `rediss://` Redis' certificate is checked against instead of
    /// the system's: for a Redis whose certificate a private CA signed (checked readable).
    pub redis_ca: Option<PathBuf>,
    /// This host's name in the fleet; None: the hostname.
    pub host: Option<String>,
    /// How much of its own demand a host leases at once.
    pub slice: Duration,
    /// Whether a crowded key goes on its line (true unless `lines = false`: every daemon of
    /// the fleet must know lines before they are used, as when some run an older version).
    pub lines: bool,
}

impl FleetSettings {
    pub(super) fn from_raw(raw: &RawFleet) -> Result<FleetSettings, String> {
        let s = Section::table("fleet");
        let Some(redis) = raw.redis.clone() else {
            return Err(s.error(
                "redis",
                "(missing)",
                "name the Redis the fleet shares, e.g. redis = \"redis://10.0.0.5:6379/0\" or \
                 \"unix:///run/redis/redis.sock\"",
            ));
        };
        check_url(&redis).map_err(|e| s.error("redis", format_args!("{redis:?}"), e))?;
        if let Some(ca) = &raw.redis_ca {
            check_ca(&redis, ca).map_err(|e| s.error("redis_ca", format_args!("{ca:?}"), e))?;
        }
        if let Some(h) = &raw.host {
            check_host(h).map_err(|e| s.error("host", format_args!("{h:?}"), e))?;
        }
        let slice = s.duration("slice", &raw.slice)?.unwrap_or(DEFAULT_SLICE);
        if !(Duration::from_millis(100)..=Duration::from_secs(60)).contains(&slice) {
            return Err(s.error(
                "slice",
                format_args!("{:?}", raw.slice.as_deref().unwrap_or_default()),
                "must be from 100ms to 60s (a second of demand suits most)",
            ));
        }
        Ok(FleetSettings {
            redis,
            redis_ca: raw.redis_ca.clone(),
            host: raw.host.clone(),
            slice,
            lines: raw.lines.unwrap_or(true),
        })
    }

    /// From `--fleet-redis` (and `--fleet-host`), over what the file says.
    pub fn from_flags(
        redis: &str,
        host: Option<&str>,
        file: Option<&FleetSettings>,
    ) -> Result<FleetSettings, String> {
        check_url(redis).map_err(|e| format!("--fleet-redis {redis:?}: {e}"))?;
        if let Some(h) = host {
            check_host(h).map_err(|e| format!("--fleet-host {h:?}: {e}"))?;
        }
        let redis_ca = file.and_then(|f| f.redis_ca.clone());
        if let Some(ca) = &redis_ca {
            check_ca(redis, ca).map_err(|e| {
                format!("--fleet-redis {redis:?} with [fleet] redis_ca = {ca:?}: {e}")
            })?;
        }
        Ok(FleetSettings {
            redis: redis.to_string(),
            redis_ca,
            host: host
                .map(str::to_string)
                .or_else(|| file.and_then(|f| f.host.clone())),
            slice: file.map_or(DEFAULT_SLICE, |f| f.slice),
            lines: file.is_none_or(|f| f.lines),
        })
    }

    /// The URL without its password, for logs and status.
    pub fn redis_shown(&self) -> String {
        redacted(&self.redis)
    }
}

/// Checks a Redis URL the way the client will read it.
pub fn check_url(url: &str) -> Result<(), String> {
    let known = [
        "redis://",
        "rediss://",
        "unix://",
        "redis+unix://",
        "valkey://",
        "valkeys://",
    ];
    if !known.iter().any(|p| url.starts_with(p)) {
        return Err(
            "not a Redis URL; write redis://HOST:PORT/DB or unix:///path/redis.sock".to_string(),
        );
    }
    redis::Client::open(url).map(|_| ()).map_err(|e| {
        format!("not a Redis URL ({e}); write redis://HOST:PORT/DB or unix:///path/redis.sock")
    })
}

/// Checks that `ca` is a readable PEM file of certificates, for a TLS URL.
fn check_ca(url: &str, ca: &Path) -> Result<(), String> {
    if !(url.starts_with("rediss://") || url.starts_with("valkeys://")) {
        return Err(format!(
            "is for a Redis reached over TLS, and {} is not (write rediss://HOST:PORT/DB, or \
             remove redis_ca)",
            redacted(url)
        ));
    }
    let pem = std::fs::read(ca).map_err(|e| {
        format!("cannot be read ({e}); give a PEM file of the CA certificates to trust")
    })?;
    if !String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----") {
        return Err(
            "holds no PEM certificate; give a PEM file of the CA certificates to trust".into(),
        );
    }
    let certs = redis::TlsCertificates {
        client_tls: None,
        root_cert: Some(pem),
    };
    redis::Client::build_with_tls(url, certs)
        .map(|_| ())
        .map_err(|e| {
            format!("is not a PEM file of certificates the client can use ({e}); give the CA's PEM")
        })
}

fn check_host(h: &str) -> Result<(), String> {
    if h.is_empty()
        || h.len() > 64
        || !h.bytes().all(|b| b.is_ascii_graphic())
        || h.starts_with('~')
    {
        return Err(
            "must be 1 to 64 visible ASCII characters not starting with ~, e.g. the hostname"
                .to_string(),
        );
    }
    Ok(())
}

/// `redis://user:secret@host/0` as `redis://user:***@host/0`.
pub fn redacted(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[scheme_end..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let userinfo = &rest[..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}:***{}", &url[..scheme_end], &rest[at..])
        }
        None => url.to_string(),
    }
}
