//! The `[proxy]` table of the llmctl config file (the daemon's file; the daemon ignores the
//! table): where the proxy listens, how long a request may wait, what it does without a daemon,
//! and its upstreams (`openai`, `anthropic` and `gemini` built in; more, or those replaced,
//! under `[proxy.upstreams.NAME]`).

use llmctl_common::located;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

mod upstream;
mod values;

use upstream::{check_key, check_name, check_url, BUILT_IN};
pub use upstream::{redact_url, Api, Upstream};
use values::Size;
pub use values::{check_listen, mib, parse_listen};

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8790";
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(60);
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(600);
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
pub const DEFAULT_MAX_HEADER_BYTES: usize = 64 << 10;
pub const DEFAULT_MAX_HEADERS: usize = 100;
/// HTTP/2: streams a connection may have open at once.
pub const MAX_CONCURRENT_STREAMS: u32 = 256;

/// The largest request body a limited route reads (it is estimated before it is sent).
pub const DEFAULT_MAX_BODY_BYTES: usize = 32 << 20;
/// The request-body bytes all limited requests may hold in memory together.
pub const DEFAULT_MAX_BODY_MEMORY: usize = 256 << 20;
/// How long a connection may stay open with no request on it.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
}

/// What the proxy does when the daemon cannot be asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailMode {
    /// Forward unlimited (warning once a minute while it lasts).
    Open,
    /// Answer 503 in the upstream's error shape.
    Closed,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProxyConfig {
    pub listen: SocketAddr,
    pub allow_remote: bool,
    pub max_wait: Duration,
    pub fail_mode: FailMode,
    /// The longest a connection to an upstream may take to open.
    pub connect_timeout: Duration,
    /// The longest an upstream may keep the proxy waiting for its answer's headers, or between
    /// two pieces of its body.
    pub read_timeout: Duration,
    /// While the daemon is away (after waiting for a restart), keys are limited with what the
    /// proxy last knew of them for this long, then requests fail open.
    pub fail_static_for: Duration,
    /// The longest a client may take to send a request's headers (slowloris).
    pub header_timeout: Duration,
    /// Connections open at once; at the bound the oldest idle one is closed for a new one,
    /// and a new one is refused when none is idle.
    pub max_connections: usize,
    /// Connections one local user may hold open (loopback peers, whose uid the kernel
    /// names; by default three quarters of `max_connections`, so one user cannot lock the
    /// others out); at the bound that user's oldest idle one is closed for a new one.
    pub max_connections_per_uid: usize,
    /// An HTTP/2 connection with no request on it is closed after this long. An HTTP/1.1
    /// connection waits for its next request's headers for `header_timeout`, as one that never
    /// sent a request does.
    pub idle_timeout: Duration,
    /// The most bytes of one request's headers, and how many headers it may have.
    pub max_header_bytes: usize,
    pub max_headers: usize,
    /// The largest body a limited request may have (413 past it).
    pub max_body_bytes: usize,
    /// The request-body bytes all limited requests may hold in memory together, their parse
    /// included; past it a request waits for room (up to its max wait), then gets 503.
    pub max_body_memory: usize,
    pub upstreams: BTreeMap<String, Upstream>,
}

impl Default for ProxyConfig {
    fn default() -> ProxyConfig {
        // Parsing the empty file gives the built-in defaults; it cannot fail.
        ProxyConfig::parse("", "defaults").unwrap_or_else(|_| unreachable!())
    }
}

#[derive(Debug, Default, Deserialize)]
struct RawFile {
    #[serde(default)]
    proxy: RawProxy,
    // The daemon's tables: checked by the daemon, not here.
    #[serde(flatten)]
    _rest: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProxy {
    listen: Option<String>,
    allow_remote: Option<bool>,
    max_wait: Option<String>,
    fail_mode: Option<String>,
    connect_timeout: Option<String>,
    read_timeout: Option<String>,
    fail_static_for: Option<String>,
    header_timeout: Option<String>,
    max_connections: Option<usize>,
    max_connections_per_uid: Option<usize>,
    idle_timeout: Option<String>,
    max_header_bytes: Option<usize>,
    max_headers: Option<usize>,
    max_body_bytes: Option<Size>,
    max_body_memory: Option<Size>,
    #[serde(default)]
    upstreams: BTreeMap<String, RawUpstream>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUpstream {
    url: Option<String>,
    api: Option<String>,
    key: Option<String>,
    ca: Option<PathBuf>,
}

impl ProxyConfig {
    /// Reads the `[proxy]` table of the config file at `path`.
    pub fn load(path: &Path) -> Result<ProxyConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        ProxyConfig::parse(&text, &path.display().to_string())
    }

    /// Parses the `[proxy]` table of a config file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<ProxyConfig, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            origin: origin.to_string(),
            message,
        };
        let raw: RawFile =
            toml::from_str(text).map_err(|e| invalid(located::describe(text, &e)))?;
        let p = raw.proxy;
        let duration = |field: &str, v: &Option<String>, default: Duration| match v {
            None => Ok(default),
            Some(s) => match llmctl_common::duration::parse(s) {
                Ok(d) if !d.is_zero() => Ok(d),
                Ok(_) => Err(invalid(format!("[proxy] {field}: must be more than 0"))),
                Err(e) => Err(invalid(format!("[proxy] {field}: {e}"))),
            },
        };
        let bounded = |field: &str, v: Option<usize>, default: usize, range| {
            bounded_in(field, v, default, range).map_err(invalid)
        };
        let listen_text = p.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
        let listen =
            parse_listen(listen_text).map_err(|e| invalid(format!("[proxy] listen: {e}")))?;
        let allow_remote = p.allow_remote.unwrap_or(false);
        check_listen(listen, allow_remote).map_err(|e| invalid(format!("[proxy] listen: {e}")))?;
        let fail_mode = match p.fail_mode.as_deref() {
            None | Some("open") => FailMode::Open,
            Some("closed") => FailMode::Closed,
            Some(other) => {
                return Err(invalid(format!(
                    "[proxy] fail_mode: {other:?} is not a fail mode; write \"open\" (forward unlimited while the daemon is away) or \"closed\" (answer 503)"
                )))
            }
        };
        let mut upstreams = BTreeMap::new();
        for (name, url, api) in BUILT_IN {
            upstreams.insert(
                name.to_string(),
                Upstream {
                    name: name.to_string(),
                    url: url.to_string(),
                    api,
                    key: name.to_string(),
                    ca: None,
                    verbatim: false,
                },
            );
        }
        for (name, u) in p.upstreams {
            let table = format!("[proxy.upstreams.{name}]");
            check_name(&name).map_err(|e| invalid(format!("{table}: {e}")))?;
            let built_in = upstreams.get(&name).cloned();
            let api = match (&u.api, &built_in) {
                (Some(a), _) => Api::parse(a).ok_or_else(|| {
                    invalid(format!(
                        "{table} api: {a:?} is not an API; write \"openai\", \"anthropic\" or \"gemini\" (how its bodies, usage and errors read)"
                    ))
                })?,
                (None, Some(b)) => b.api,
                (None, None) => Api::OpenAi,
            };
            let url = match (&u.url, &built_in) {
                (Some(url), _) => check_url(url).map_err(|e| invalid(format!("{table} url: {e}")))?,
                (None, Some(b)) => b.url.clone(),
                (None, None) => {
                    return Err(invalid(format!(
                        "{table}: url is missing; write the server's base, like url = \"http://10.0.0.7:8000\""
                    )))
                }
            };
            let key = u.key.clone().unwrap_or_else(|| name.clone());
            check_key(&key).map_err(|e| invalid(format!("{table} key: {e}")))?;
            if let Some(ca) = &u.ca {
                if !ca.is_file() {
                    return Err(invalid(format!(
                        "{table} ca: {} is not a readable file; give a PEM file of the certificates to trust",
                        ca.display()
                    )));
                }
            }
            upstreams.insert(
                name.clone(),
                Upstream {
                    name,
                    url,
                    api,
                    key,
                    ca: u.ca,
                    verbatim: false,
                },
            );
        }
        let max_connections = bounded(
            "max_connections",
            p.max_connections,
            DEFAULT_MAX_CONNECTIONS,
            1..=1_000_000,
        )?;
        let size = |field: &str,
                    v: &Option<Size>,
                    default: usize,
                    range: std::ops::RangeInclusive<usize>| {
            let n = match v {
                None => return Ok(default),
                Some(s) => s
                    .bytes()
                    .map_err(|e| invalid(format!("[proxy] {field}: {e}")))?,
            };
            usize::try_from(n)
                .ok()
                .filter(|n| range.contains(n))
                .ok_or_else(|| {
                    invalid(format!(
                        "[proxy] {field}: {n} bytes is out of range; give {} to {} (default {})",
                        mib(*range.start()),
                        mib(*range.end()),
                        mib(default)
                    ))
                })
        };
        let max_body_bytes = size(
            "max_body_bytes",
            &p.max_body_bytes,
            DEFAULT_MAX_BODY_BYTES,
            (64 << 10)..=(1 << 30),
        )?;
        let max_body_memory = size(
            "max_body_memory",
            &p.max_body_memory,
            DEFAULT_MAX_BODY_MEMORY,
            (4 << 20)..=(64 << 30),
        )?;
        // One large body must fit beside the room kept for small ones: its bytes and its parse.
        let one = max_body_memory - crate::budget::reserve(max_body_memory);
        if one < 3 * max_body_bytes {
            return Err(invalid(format!(
                "[proxy] max_body_memory: {} leaves {} for one large request, less than three times max_body_bytes ({}: a body and its parse); raise max_body_memory to at least {} or lower max_body_bytes",
                mib(max_body_memory),
                mib(one),
                mib(max_body_bytes),
                mib(memory_for(max_body_bytes)),
            )));
        }
        Ok(ProxyConfig {
            listen,
            allow_remote,
            max_wait: match duration("max_wait", &p.max_wait, DEFAULT_MAX_WAIT)? {
                d if d > crate::forward::MAX_WAIT => {
                    return Err(invalid(format!(
                        "[proxy] max_wait: {:?} is more than the daemon's bound of an hour; give at most \"1h\"",
                        p.max_wait.unwrap_or_default()
                    )))
                }
                d => d,
            },
            fail_mode,
            connect_timeout: duration(
                "connect_timeout",
                &p.connect_timeout,
                DEFAULT_CONNECT_TIMEOUT,
            )?,
            read_timeout: duration("read_timeout", &p.read_timeout, DEFAULT_READ_TIMEOUT)?,
            fail_static_for: duration(
                "fail_static_for",
                &p.fail_static_for,
                crate::rules::fail_static::FAIL_STATIC_FOR,
            )?,
            header_timeout: duration("header_timeout", &p.header_timeout, DEFAULT_HEADER_TIMEOUT)?,
            max_connections,
            max_connections_per_uid: match p.max_connections_per_uid {
                Some(n) if n > max_connections => {
                    return Err(invalid(format!(
                        "[proxy] max_connections_per_uid: {n} is more than max_connections ({max_connections}); give at most that, or raise max_connections"
                    )))
                }
                v => bounded(
                    "max_connections_per_uid",
                    v,
                    (max_connections * 3 / 4).max(1),
                    1..=max_connections,
                )?,
            },
            idle_timeout: duration("idle_timeout", &p.idle_timeout, DEFAULT_IDLE_TIMEOUT)?,
            max_header_bytes: bounded(
                "max_header_bytes",
                p.max_header_bytes,
                DEFAULT_MAX_HEADER_BYTES,
                8192..=16 << 20,
            )?,
            max_headers: bounded("max_headers", p.max_headers, DEFAULT_MAX_HEADERS, 8..=10_000)?,
            max_body_bytes,
            max_body_memory,
            upstreams,
        })
    }
}

/// The least `max_body_memory` that holds one body of `max_body_bytes` and its parse beside the
/// room kept for small requests, in whole MiB.
fn memory_for(max_body_bytes: usize) -> usize {
    let least = (3 * max_body_bytes * 8).div_ceil(7);
    let least = if least <= 256 << 20 {
        least
    } else {
        3 * max_body_bytes + (32 << 20)
    };
    least.div_ceil(1 << 20) << 20
}

/// A count from `[proxy]` within `range`, else `default` when not given.
fn bounded_in(
    field: &str,
    v: Option<usize>,
    default: usize,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, String> {
    match v {
        None => Ok(default),
        Some(n) if range.contains(&n) => Ok(n),
        Some(n) => Err(format!(
            "[proxy] {field}: {n} is out of range; give {} to {} (default {default})",
            range.start(),
            range.end()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        ProxyConfig::parse(text, "config.toml")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn the_defaults_are_three_upstreams_on_loopback() {
        let c = ProxyConfig::default();
        assert_eq!(c.listen.to_string(), DEFAULT_LISTEN);
        assert_eq!(c.max_wait, DEFAULT_MAX_WAIT);
        assert_eq!(c.fail_mode, FailMode::Open);
        let names: Vec<&str> = c.upstreams.keys().map(String::as_str).collect();
        assert_eq!(names, ["anthropic", "gemini", "openai"]);
        assert_eq!(
            c.upstreams["gemini"].url,
            "https://generativelanguage.googleapis.com"
        );
    }

    #[test]
    fn an_upstream_from_the_file_beside_the_daemons_tables() {
        let c = ProxyConfig::parse(
            r#"
[daemon]
lease_ttl = "5m"
[keys."local/vllm"]
concurrency = 8
[proxy]
max_wait = "5s"
fail_mode = "closed"
[proxy.upstreams.vllm]
url = "http://10.0.0.7:8000/"
key = "local/vllm"
[proxy.upstreams.openai]
url = "http://127.0.0.1:9000"
"#,
            "t",
        )
        .expect("parses");
        assert_eq!(c.max_wait, Duration::from_secs(5));
        assert_eq!(c.fail_mode, FailMode::Closed);
        let v = &c.upstreams["vllm"];
        assert_eq!(
            (v.url.as_str(), v.api, v.key.as_str()),
            ("http://10.0.0.7:8000", Api::OpenAi, "local/vllm")
        );
        let o = &c.upstreams["openai"];
        assert_eq!(
            (o.url.as_str(), o.key.as_str()),
            ("http://127.0.0.1:9000", "openai")
        );
    }

    #[test]
    fn bad_values_name_the_table_the_field_and_the_fix() {
        assert!(err("[proxy]\nlisten = \"0.0.0.0:8790\"\n").contains("allow_remote = true"));
        assert!(ProxyConfig::parse(
            "[proxy]\nlisten = \"0.0.0.0:8790\"\nallow_remote = true\n",
            "t"
        )
        .is_ok());
        assert!(err("[proxy]\nfail_mode = \"sometimes\"\n")
            .contains("[proxy] fail_mode: \"sometimes\""));
        assert!(err("[proxy]\nmax_wait = \"soon\"\n").contains("[proxy] max_wait"));
        let e = err("[proxy.upstreams.vllm]\napi = \"openai\"\n");
        assert!(e.contains("[proxy.upstreams.vllm]: url is missing"), "{e}");
        let e = err("[proxy.upstreams.vllm]\nurl = \"ftp://x\"\n");
        assert!(e.contains("[proxy.upstreams.vllm] url"), "{e}");
        let e = err("[proxy.upstreams.vllm]\nurl = \"http://x\"\napi = \"cohere\"\n");
        assert!(e.contains("api: \"cohere\""), "{e}");
        let e = err("[proxy.upstreams.vllm]\nurl = \"http://x\"\nkye = \"a\"\n");
        assert!(e.contains("kye") && e.contains("line 3"), "{e}");
        let e = err("[proxy.upstreams._x]\nurl = \"http://x\"\n");
        assert!(e.contains("cannot name an upstream"), "{e}");
        let e = err("[proxy.upstreams.v]\nurl = \"http://x\"\nkey = \"a//b\"\n");
        assert!(e.contains("key: \"a//b\""), "{e}");
    }

    #[test]
    fn body_sizes_read_as_bytes_or_with_a_unit_and_must_fit_together() {
        let c = ProxyConfig::default();
        assert_eq!(c.max_body_bytes, 32 << 20);
        assert_eq!(c.max_body_memory, 256 << 20);
        let c = ProxyConfig::parse(
            "[proxy]\nmax_body_memory = \"1GiB\"\nmax_body_bytes = 1048576",
            "t",
        )
        .expect("valid");
        assert_eq!((c.max_body_memory, c.max_body_bytes), (1 << 30, 1 << 20));
        assert!(
            err("[proxy]\nmax_body_memory = \"lots\"").contains("\"lots\" is not a size"),
            "{}",
            err("[proxy]\nmax_body_memory = \"lots\"")
        );
        // 64 MiB keeps 8 MiB for small requests: 56 MiB is less than a 32 MiB body and its parse.
        let e = err("[proxy]\nmax_body_memory = \"64MiB\"");
        assert!(
            e.contains("max_body_memory: 64 MiB leaves 56 MiB") && e.contains("at least 110 MiB"),
            "{e}"
        );
        let e = err("[proxy]\nmax_body_bytes = \"2GiB\"");
        assert!(e.contains("out of range"), "{e}");
        let c =
            ProxyConfig::parse("[proxy]\nmax_body_memory = \"110MiB\"", "t").expect("110 MiB fits");
        assert_eq!(c.max_body_memory, 110 << 20);
    }

    #[test]
    fn connections_per_uid_stay_within_the_total() {
        let c = ProxyConfig::parse("[proxy]\nmax_connections = 100", "t").expect("valid");
        assert_eq!(c.max_connections_per_uid, 75);
        let e = err("[proxy]\nmax_connections = 100\nmax_connections_per_uid = 200");
        assert!(
            e.contains("max_connections_per_uid: 200 is more than max_connections (100)"),
            "{e}"
        );
        assert_eq!(ProxyConfig::default().max_connections_per_uid, 768);
        assert!(err("[proxy]\nmax_body_memory = -5").contains("-5 is not a size"));
        assert!(err("[proxy]\nmax_body_memory = 1.5").contains("1.5 is not a size"));
        assert!(err("[proxy]\nmax_body_memory = \"256MB\"").contains("binary unit"));
        assert_eq!(ProxyConfig::default().idle_timeout, DEFAULT_IDLE_TIMEOUT);
    }
}
