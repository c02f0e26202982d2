//! The rules of `llmctl exec`, apart from its command line: which variables it sets and where
//! each leads (`env`), how agent CLIs that read no variable are pointed (`agents`), and which
//! proxy it may hand the host's credentials to (`trust`).

pub mod agents;
pub mod env;
pub mod trust;

use std::time::Duration;

/// Whether an llmctl proxy answers at `url` (its health path, within a second). Says nothing
/// of whose it is: see [`vouch`].
pub async fn answers(url: &str) -> bool {
    let Some(authority) = url.strip_prefix("http://").map(|r| r.trim_end_matches('/')) else {
        return false;
    };
    let probe = async {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(authority).await.ok()?;
        let req = format!(
            "GET /_llmctl/health HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await.ok()?;
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.ok()?;
        Some(String::from_utf8_lossy(&out).contains("\"proxy\":\"llmctl\""))
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(1), probe).await,
        Ok(Some(true))
    )
}

/// Whether the proxy at `url` may be given the user's credentials: its listening socket is the
/// user's own (asked of the kernel before anything is sent there), and an llmctl proxy answers
/// there. Err says why not.
pub async fn vouch(url: &str) -> Result<(), String> {
    if let Some(why) = trust::owner(url).distrust(url) {
        return Err(why);
    }
    if !answers(url).await {
        return Err(format!("no llmctl proxy answers at {url}"));
    }
    Ok(())
}

/// What `exec` makes of a proxy it found (at `[proxy] listen`, or named by `LLMCTL_PROXY_URL`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// The user's own, answering: variables under it are kept.
    Trusted,
    /// Not to be trusted, and nothing points under it: passed over (why, for `--verbose`).
    PassedOver(String),
    /// Not to be trusted, and base URLs of the environment point under it: whoever listens
    /// there now, or takes the port while the command runs, would get their credentials. The
    /// message names them and the fix.
    Refused(String),
}

/// Whether the proxy at `url`, found as `what`, may be trusted with the environment's
/// (read with `env`) credentials.
pub async fn found(url: &str, what: &str, env: &dyn Fn(&str) -> Option<String>) -> Found {
    let Err(why) = vouch(url).await else {
        return Found::Trusted;
    };
    let under = env::set_under(env, url);
    if under.is_empty() {
        return Found::PassedOver(format!("{what}: {why}"));
    }
    let (points, them) = match under.len() {
        1 => ("points", "it"),
        _ => ("point", "them"),
    };
    let also = if what == "[proxy] listen" {
        String::new()
    } else {
        format!(" and {what}")
    };
    Found::Refused(format!(
        "{} {points} under {what} ({}), where no proxy of yours answers ({why}); start yours there with `llmctl proxy`, or unset {them}{also}",
        under.join(", "),
        env::redact(url)
    ))
}
