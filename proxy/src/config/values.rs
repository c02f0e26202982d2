//! The values of `[proxy]` that have a syntax of their own: sizes ("256MiB") and addresses to
//! listen on.

use serde::Deserialize;
use std::net::SocketAddr;

/// A size in bytes: a whole number, or text with a unit ("256MiB", "1 GiB", "64KiB").
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Size {
    Bytes(i64),
    Text(String),
    Other(toml::Value),
}

impl Size {
    pub(super) fn bytes(&self) -> Result<u64, String> {
        let text = match self {
            Size::Bytes(n) => {
                return u64::try_from(*n).map_err(|_| {
                    format!(
                    "{n} is not a size; give a number of bytes, 0 or more, or text like \"256MiB\""
                )
                })
            }
            Size::Text(t) => t.trim(),
            Size::Other(v) => {
                return Err(format!(
                    "{v} is not a size; give a whole number of bytes, or text like \"256MiB\""
                ))
            }
        };
        let split = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (digits, unit) = text.split_at(split);
        let unit_bytes: u64 = match unit.trim() {
            "" | "B" => 1,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            _ => 0,
        };
        digits
            .parse::<u64>()
            .ok()
            .filter(|_| unit_bytes > 0)
            .and_then(|n| n.checked_mul(unit_bytes))
            .ok_or_else(|| {
                format!("{text:?} is not a size; write bytes (268435456) or with a binary unit, like \"256MiB\", \"64KiB\" or \"1GiB\"")
            })
    }
}

/// A size for messages: whole MiB as "N MiB", else KiB, else bytes.
pub fn mib(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// An address to listen on: `HOST:PORT`, or a bare port on 127.0.0.1.
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    let s = s.trim();
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let s = s.strip_prefix("http://").unwrap_or(s);
    s.parse::<SocketAddr>()
        .or_else(|_| match s.rsplit_once(':') {
            Some(("localhost", port)) => port
                .parse::<u16>()
                .map(|p| SocketAddr::from(([127, 0, 0, 1], p)))
                .map_err(|_| ()),
            _ => Err(()),
        })
        .map_err(|_| format!("{s:?} is not an address; write it like 127.0.0.1:8790 or [::1]:8790"))
}

/// Only loopback unless `allow_remote`: the proxy adds the host's limiting, not its own
/// authentication, and the requests it forwards carry the callers' credentials.
pub fn check_listen(addr: SocketAddr, allow_remote: bool) -> Result<(), String> {
    if addr.ip().is_loopback() || allow_remote {
        Ok(())
    } else {
        Err(format!(
            "{addr} is not a loopback address; the proxy serves anyone who can reach it, so listen on 127.0.0.1, or set allow_remote = true in [proxy] to serve other hosts"
        ))
    }
}
