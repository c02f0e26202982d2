//! What a request says of itself to the proxy and which of its headers travel: the steering
//! `x-llmctl-*` headers (read, checked, never forwarded), the headers forwarded and returned
//! (without hop-by-hop ones), and the path's upstream name.

use http::{HeaderMap, HeaderName, HeaderValue};
use std::time::Duration;

/// The longest a request may wait for a grant: the daemon's own bound.
pub const MAX_WAIT: Duration = Duration::from_secs(3600);
/// Headers that steer the proxy; never forwarded.
pub const STEERING: [&str; 5] = [
    "x-llmctl-key",
    "x-llmctl-priority",
    "x-llmctl-run-id",
    "x-llmctl-max-wait",
    "x-llmctl-client",
];
/// Hop-by-hop headers (RFC 9110 7.6.1): of one connection, never forwarded.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
];

/// What steers one request: the `x-llmctl-*` headers, checked.
pub(crate) struct Steer {
    pub(crate) key: Option<String>,
    pub(crate) priority: i32,
    pub(crate) run_id: String,
    pub(crate) max_wait: Duration,
    pub(crate) client: Option<String>,
}

pub(crate) fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

impl Steer {
    pub(crate) fn read(h: &HeaderMap, default_wait: Duration) -> Result<Steer, String> {
        let priority = match header(h, "x-llmctl-priority") {
            None => 0,
            Some(p) => p
                .parse::<i32>()
                .ok()
                .filter(|p| (-1000..=1000).contains(p))
                .ok_or_else(|| format!("x-llmctl-priority: {p:?} is not a priority; give a whole number from -1000 to 1000 (higher goes first)"))?,
        };
        let max_wait = match header(h, "x-llmctl-max-wait") {
            None => default_wait,
            Some(w) => {
                let d = match w.parse::<f64>() {
                    Ok(secs) if secs.is_finite() && secs >= 0.0 => {
                        Duration::from_secs_f64(secs.min(1e9))
                    }
                    _ => llmctl_common::duration::parse(w)
                        .map_err(|e| format!("x-llmctl-max-wait: {e} (or seconds, like 30)"))?,
                };
                if d > MAX_WAIT {
                    return Err(format!(
                        "x-llmctl-max-wait: {w:?} is more than the daemon's bound of {} s; give at most 1h",
                        MAX_WAIT.as_secs()
                    ));
                }
                d
            }
        };
        let text = |name: &str, max: usize| -> Result<Option<String>, String> {
            match h.get(name) {
                None => Ok(None),
                Some(v) => {
                    let s = v
                        .to_str()
                        .map_err(|_| format!("{name}: not printable ASCII"))?
                        .trim();
                    if s.is_empty() || s.len() > max || s.chars().any(char::is_whitespace) {
                        Err(format!(
                            "{name}: {s:?} must be 1 to {max} characters without spaces"
                        ))
                    } else {
                        Ok(Some(s.to_string()))
                    }
                }
            }
        };
        Ok(Steer {
            key: text("x-llmctl-key", 256)?,
            priority,
            run_id: text("x-llmctl-run-id", 128)?.unwrap_or_default(),
            max_wait,
            client: text("x-llmctl-client", 128)?,
        })
    }
}

/// The headers of a request as forwarded: without hop-by-hop ones, `host` (the client sets
/// the upstream's), the length (the body sets it) and the steering headers.
pub(crate) fn forwarded_headers(h: &HeaderMap, identity: bool) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(h.len());
    let named_by_connection: Vec<String> = h
        .get_all("connection")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|s| s.trim().to_ascii_lowercase()))
        .collect();
    for (name, value) in h {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n)
            || STEERING.contains(&n)
            || n == "host"
            || n == "content-length"
            || n == "upgrade"
            || named_by_connection.iter().any(|c| c == n)
            || (identity && n == "accept-encoding")
        {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    if identity {
        // The answer is read as it passes (usage, errors): ask for it uncompressed.
        out.insert("accept-encoding", HeaderValue::from_static("identity"));
    }
    out
}

/// An upstream's answer headers as returned: without hop-by-hop ones.
pub(crate) fn returned_headers(h: &mut HeaderMap) {
    for n in HOP_BY_HOP {
        h.remove(n);
    }
    h.remove("upgrade");
}

pub(crate) fn put(h: &mut HeaderMap, name: &'static str, value: impl ToString) {
    if let Ok(v) = HeaderValue::from_str(&value.to_string()) {
        h.insert(HeaderName::from_static(name), v);
    }
}

/// The path's first segment (the upstream's name) and the rest, which keeps its leading '/'.
pub(crate) fn split_path(path: &str) -> (&str, &str) {
    let p = path.strip_prefix('/').unwrap_or(path);
    match p.find('/') {
        Some(i) => (&p[..i], &p[i..]),
        None => (p, ""),
    }
}
