//! `llmctl simulate --scenario agents`: twelve agent CLIs on one key of a provider allowing 2
//! requests/s, each following its CLI's own rules as measured from the real ones (tests
//! `tests/integration/agents.rs` run those), straight to the provider and through a proxy of
//! this executable's daemon; and the same with the plan's 5-hour window closed.
//!
//! - **Claude Code** streams `POST /v1/messages`; on a 429 or 529 it waits a `retry-after` of
//!   at most 60 s and tries again (10 attempts), and gives up on a longer one, or on none.
//! - **Codex** first opens the Responses API over a WebSocket (`GET /v1/responses` with
//!   `Upgrade`): on `426` it falls back to HTTPS at once, on any other answer it tries 5 times
//!   more, backing off from 200 ms, before it does. It streams `POST /v1/responses`; on a 429 it
//!   obeys `retry-after` (whole seconds) up to 5 times, ignores `x-should-retry` and
//!   `retry-after-ms`, does not retry without `retry-after`, and stops at `usage_limit_reached`.

use super::SimError;
use crate::http::{HttpClient, HttpResponse};
use crate::local_daemon::LocalDaemon;
use crate::provider::{FakeProvider, Limits, ProviderConfig};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// Agents at once, and their turns each.
pub const AGENTS: usize = 12;
pub const TURNS: usize = 2;
/// Between two agents' starts: twelve real CLIs started at once on two cores reach the provider
/// over 0.8 to 2.2 s (`tests/integration/agents.rs` measures it), about this apart.
pub const START_GAP: Duration = Duration::from_millis(100);
/// The provider's limit.
pub const RATE: f64 = 2.0;
pub const BURST: f64 = 2.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CliShape {
    ClaudeCode,
    Codex,
}

impl CliShape {
    pub fn name(self) -> &'static str {
        match self {
            CliShape::ClaudeCode => "claude-code",
            CliShape::Codex => "codex",
        }
    }
}

/// One row: a CLI's shape, straight or through llmctl, its window open or closed.
#[derive(Clone, Copy, Debug)]
pub struct AgentsRow {
    pub cli: CliShape,
    pub llmctl: bool,
    pub window_closed: bool,
}

impl AgentsRow {
    pub fn label(&self) -> String {
        format!(
            "{}/{}{}",
            self.cli.name(),
            if self.llmctl { "llmctl" } else { "direct" },
            if self.window_closed {
                "/window-closed"
            } else {
                ""
            }
        )
    }

    /// Every row: each CLI straight and through llmctl, then through llmctl with the window
    /// closed.
    pub fn all() -> Vec<AgentsRow> {
        let mut rows = Vec::new();
        for cli in [CliShape::ClaudeCode, CliShape::Codex] {
            for (llmctl, window_closed) in [(false, false), (true, false), (true, true)] {
                rows.push(AgentsRow {
                    cli,
                    llmctl,
                    window_closed,
                });
            }
        }
        rows
    }
}

/// What a row measured.
#[derive(Clone, Debug, Serialize)]
pub struct AgentsResult {
    pub row: String,
    pub agents: usize,
    pub done: usize,
    /// Agents that were handed a 429 (and so retried it or gave up on it).
    pub saw_429: usize,
    pub provider_requests: u64,
    pub provider_429s: u64,
    /// WebSocket upgrades answered by the provider (each a request llmctl could not limit).
    pub websocket_attempts_upstream: u64,
    pub wall_s: f64,
    /// First to last success at the provider, and the ideal for the successes at its pace.
    pub first_to_last_s: f64,
    pub ideal_s: f64,
    /// With the window closed: the requests the provider got after its first refusal, and how
    /// long after it the last agent ended.
    pub after_first_refusal: Option<u64>,
    pub ended_after_refusal_s: Option<f64>,
}

impl AgentsResult {
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// What one agent did.
#[derive(Default)]
struct Agent {
    done: bool,
    saw_429: bool,
    ended: Option<Instant>,
}

/// The provider agents share: `RATE` requests/s with a burst of `BURST`, rejected requests
/// counted (as OpenAI counts them), answers in 200 ms. The real CLIs' tests use it too.
pub fn provider_config() -> ProviderConfig {
    ProviderConfig {
        limits: Limits {
            per_minute: [Some(RATE * 60.0), None, None, None],
            burst: [Some(BURST), None, None, None],
        },
        count_rejected: true,
        latency: Duration::from_millis(200),
        ..ProviderConfig::default()
    }
}

/// Runs `row`: a fresh provider, and for llmctl a fresh daemon of `exe` and a proxy.
pub async fn run(
    exe: &Path,
    row: AgentsRow,
    max_run_time: Duration,
) -> Result<AgentsResult, SimError> {
    let provider = FakeProvider::start(
        ProviderConfig {
            plan_window: row
                .window_closed
                .then_some((1, Duration::from_secs(5 * 3600))),
            ..provider_config()
        },
        "127.0.0.1:0".parse().expect("a loopback address"),
    )
    .await
    .map_err(SimError::Provider)?;
    let http = HttpClient::new();
    if row.window_closed {
        // The window's one request, sent by another process of the account.
        let (path, body) = request(row.cli);
        http.post_json(
            &format!("{}/{path}", provider.url()),
            &body,
            Duration::from_secs(10),
        )
        .await
        .map_err(|e| SimError::Worker(e.to_string()))?;
        provider.provider.reset_stats();
    }
    let dir = std::env::temp_dir().join(format!(
        "llmctl-sim-agents-{}-{}",
        std::process::id(),
        row.label().replace('/', "-")
    ));
    let mut daemon = None;
    let mut proxy = None;
    let base = if row.llmctl {
        let d = LocalDaemon::start(exe, dir.clone(), "")
            .await
            .map_err(SimError::Worker)?;
        let upstream = provider.url();
        let text = format!(
            "[proxy]\nlisten = \"127.0.0.1:0\"\n[proxy.upstreams.openai]\nurl = \"{upstream}\"\n[proxy.upstreams.anthropic]\nurl = \"{upstream}\"\n"
        );
        let config = llmctl_proxy::ProxyConfig::parse(&text, "agents")
            .map_err(|e| SimError::Worker(e.to_string()))?;
        let p = llmctl_proxy::Running::start(config, d.socket.clone())
            .await
            .map_err(|e| SimError::Worker(e.to_string()))?;
        let route = match row.cli {
            CliShape::ClaudeCode => "anthropic",
            CliShape::Codex => "openai",
        };
        let base = format!("{}/{route}", p.url());
        daemon = Some(d);
        proxy = Some(p);
        base
    } else {
        provider.url()
    };
    let started = Instant::now();
    let deadline = started + max_run_time;
    let mut tasks = Vec::new();
    for i in 0..AGENTS {
        let (http, base, cli) = (http.clone(), base.clone(), row.cli);
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(START_GAP * i as u32).await;
            agent(&http, &base, cli, deadline).await
        }));
    }
    let mut agents = Vec::new();
    for t in tasks {
        agents.push(t.await.unwrap_or_default());
    }
    let wall = agents
        .iter()
        .filter_map(|a| a.ended)
        .max()
        .map_or(Duration::ZERO, |e| e.duration_since(started));
    let s = provider.provider.stats();
    let served = s.responses.get(&200).copied().unwrap_or(0) as f64;
    let first_to_last = (s.last_success_unix_ms.unwrap_or(0) - s.first_success_unix_ms.unwrap_or(0))
        as f64
        / 1000.0;
    let refused: u64 = s.rate_limited.iter().sum::<u64>() + s.plan_refused;
    let (after, ended_after) = if row.window_closed {
        let last = agents.iter().filter_map(|a| a.ended).max();
        let ended_after = match (s.first_plan_refusal_unix_ms, last) {
            (Some(first), Some(last)) => {
                let last_unix = llmctl_client::time::now_unix_ms()
                    - Instant::now().duration_since(last).as_millis() as i64;
                Some((last_unix - first) as f64 / 1000.0)
            }
            _ => None,
        };
        (Some(s.plan_refused.saturating_sub(1)), ended_after)
    } else {
        (None, None)
    };
    drop(proxy);
    drop(daemon);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(AgentsResult {
        row: row.label(),
        agents: AGENTS,
        done: agents.iter().filter(|a| a.done).count(),
        saw_429: agents.iter().filter(|a| a.saw_429).count(),
        provider_requests: s.requests,
        provider_429s: refused,
        websocket_attempts_upstream: s.websocket_attempts,
        wall_s: wall.as_secs_f64(),
        first_to_last_s: first_to_last,
        ideal_s: (served - BURST).max(0.0) / RATE,
        after_first_refusal: after,
        ended_after_refusal_s: ended_after,
    })
}

/// The path and body of one turn of `cli`.
fn request(cli: CliShape) -> (&'static str, Value) {
    match cli {
        CliShape::ClaudeCode => (
            "v1/messages",
            json!({"model": "claude-x", "max_tokens": 32, "stream": true,
                   "messages": [{"role": "user", "content": "say hi"}]}),
        ),
        CliShape::Codex => (
            "v1/responses",
            json!({"model": "gpt-x", "stream": true, "input": "say hi"}),
        ),
    }
}

/// Whole seconds of `retry-after`, as both CLIs read it.
fn retry_after_secs(r: &HttpResponse) -> Option<u64> {
    r.header("retry-after")?.trim().parse().ok()
}

/// One agent: `TURNS` turns, each retried by the CLI's own rules.
async fn agent(http: &HttpClient, base: &str, cli: CliShape, deadline: Instant) -> Agent {
    let mut a = Agent::default();
    if cli == CliShape::Codex {
        websocket_first(base, deadline).await;
    }
    let (path, body) = request(cli);
    let url = format!("{base}/{path}");
    for _ in 0..TURNS {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                a.ended = Some(Instant::now());
                return a;
            }
            let Ok(r) = http.post_json(&url, &body, left).await else {
                a.ended = Some(Instant::now());
                return a;
            };
            if r.status == 200 {
                break;
            }
            if r.status == 429 || r.status == 529 {
                a.saw_429 = true;
            }
            let wait = match cli {
                CliShape::ClaudeCode => retry_after_secs(&r)
                    .filter(|s| *s <= 60 && attempt < 10 && matches!(r.status, 429 | 529)),
                CliShape::Codex => {
                    let usage_limit = r.json()["error"]["type"] == "usage_limit_reached";
                    retry_after_secs(&r).filter(|_| !usage_limit && attempt <= 5 && r.status == 429)
                }
            };
            match wait {
                Some(secs) => tokio::time::sleep(Duration::from_secs(secs)).await,
                None => {
                    a.ended = Some(Instant::now());
                    return a;
                }
            }
        }
    }
    a.done = true;
    a.ended = Some(Instant::now());
    a
}

/// Codex's WebSocket first: `426` (or `101`) ends it at once; any other answer, or none, is
/// tried again 5 times, backing off from 200 ms, before the HTTPS fallback.
async fn websocket_first(base: &str, deadline: Instant) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Some(rest) = base.strip_prefix("http://") else {
        return;
    };
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let mut backoff = Duration::from_millis(200);
    for _ in 0..6 {
        if Instant::now() >= deadline {
            return;
        }
        let answer = async {
            let mut s = tokio::net::TcpStream::connect(authority).await.ok()?;
            let req = format!(
                "GET {prefix}/v1/responses HTTP/1.1\r\nHost: {authority}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOpenAI-Beta: responses_websockets=2026-02-06\r\n\r\n"
            );
            s.write_all(req.as_bytes()).await.ok()?;
            let mut buf = [0u8; 64];
            let n = s.read(&mut buf).await.ok()?;
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            head.split_whitespace().nth(1).map(str::to_string)
        };
        let status = tokio::time::timeout(Duration::from_secs(5), answer)
            .await
            .ok()
            .flatten();
        if matches!(status.as_deref(), Some("426") | Some("101")) {
            return;
        }
        tokio::time::sleep(backoff).await;
        backoff *= 2;
    }
}

/// The rows as a table.
pub fn table(rows: &[AgentsResult]) -> String {
    let mut out = format!(
        "{:<34} {:>5} {:>6} {:>9} {:>5} {:>4} {:>7} {:>13} {:>9}\n",
        "row", "done", "saw429", "requests", "429s", "ws", "wall s", "first-last s", "ideal s"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<34} {:>2}/{:<2} {:>6} {:>9} {:>5} {:>4} {:>7.1} {:>13.1} {:>9.1}",
            r.row,
            r.done,
            r.agents,
            r.saw_429,
            r.provider_requests,
            r.provider_429s,
            r.websocket_attempts_upstream,
            r.wall_s,
            r.first_to_last_s,
            r.ideal_s
        ));
        if let (Some(after), Some(ended)) = (r.after_first_refusal, r.ended_after_refusal_s) {
            out.push_str(&format!(
                "  window closed: {after} request(s) after the first refusal, all ended {ended:.1} s after it"
            ));
        }
        out.push('\n');
    }
    out
}
