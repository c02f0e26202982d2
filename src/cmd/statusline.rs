//! `llmctl statusline`: one short line for an agent CLI's status line (Claude Code's
//! `statusLine` command), tmux or a shell prompt: each plan window's use and reset, and the
//! host's refusals in the last minute; `--json` for scripts. It reads only the daemon's state
//! (one Status call, no daemon started), and prints a quiet word when no daemon answers.

use clap::Args;
use llmctl_client::pb;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct StatuslineArgs {
    /// Print the figures as JSON
    #[arg(long)]
    json: bool,
    /// Only keys starting with this (the plan windows of one account: `anthropic`, `codex`)
    #[arg(long, value_name = "PREFIX", default_value = "")]
    prefix: String,
}

/// How long the line waits for the daemon: a status line is redrawn often, and must not hang.
const DEADLINE: Duration = Duration::from_millis(500);

/// One plan window of an account, as the keys under it last said it.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub account: String,
    pub name: String,
    pub label: String,
    /// 0 to 1; None when not stated.
    pub used: Option<f64>,
    /// Unix ms; None when not stated.
    pub resets_at_unix_ms: Option<i64>,
    pub closed: bool,
}

/// What the line shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub windows: Vec<Window>,
    /// The provider's refusals a minute, lately, all keys.
    pub refused_per_minute: f64,
    pub now_unix_ms: i64,
}

/// The figures of a status: each account's windows once (the latest reset, the most used, of
/// the keys that carry it), and the refusals of the last minute.
pub fn figures(st: &pb::StatusResponse) -> Figures {
    let mut windows: BTreeMap<(String, String), Window> = BTreeMap::new();
    let mut refused = 0.0;
    for k in &st.keys {
        refused += k.rate_limited_per_minute;
        let account = k.key.split('/').next().unwrap_or(&k.key).to_string();
        for w in &k.plan_windows {
            let this = Window {
                account: account.clone(),
                name: w.name.clone(),
                label: w.label.clone(),
                used: (w.used >= 0.0).then_some(w.used),
                resets_at_unix_ms: (w.resets_at_unix_ms > 0).then_some(w.resets_at_unix_ms),
                closed: w.closed,
            };
            windows
                .entry((account.clone(), w.name.clone()))
                .and_modify(|seen| {
                    seen.closed |= this.closed;
                    seen.used = match (seen.used, this.used) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    };
                    seen.resets_at_unix_ms = seen.resets_at_unix_ms.max(this.resets_at_unix_ms);
                })
                .or_insert(this);
        }
    }
    Figures {
        windows: windows.into_values().collect(),
        refused_per_minute: refused,
        now_unix_ms: st.now_unix_ms,
    }
}

/// The line: `anthropic 5h 83% 2h10m · 7d 41% 3d4h · 429/min 0`; a closed window says so.
pub fn line(f: &Figures) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut last_account = "";
    for w in &f.windows {
        let mut s = String::new();
        if w.account != last_account {
            s.push_str(&w.account);
            s.push(' ');
            last_account = &w.account;
        }
        s.push_str(&w.name);
        match (w.closed, w.used) {
            (true, _) => s.push_str(" closed"),
            (false, Some(u)) => s.push_str(&format!(" {:.0}%", (u * 100.0).clamp(0.0, 999.0))),
            (false, None) => {}
        }
        if let Some(at) = w.resets_at_unix_ms.filter(|&at| at > f.now_unix_ms) {
            let left = Duration::from_millis((at - f.now_unix_ms) as u64);
            s.push(' ');
            s.push_str(&short(left));
        }
        parts.push(s);
    }
    parts.push(format!("429/min {:.0}", f.refused_per_minute));
    parts.join(" · ")
}

/// `2h10m`, `3d4h`, `45m`, `30s`.
fn short(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => match (s % 3600) / 60 {
            0 => format!("{}h", s / 3600),
            m => format!("{}h{m}m", s / 3600),
        },
        _ => match (s % 86_400) / 3600 {
            0 => format!("{}d", s / 86_400),
            h => format!("{}d{h}h", s / 86_400),
        },
    }
}

pub fn figures_json(f: &Figures) -> Value {
    json!({
        "daemon": true,
        "windows": f.windows.iter().map(|w| json!({
            "account": w.account,
            "name": w.name,
            "label": w.label,
            "used": w.used,
            "resets_at_unix_ms": w.resets_at_unix_ms,
            "closed": w.closed,
        })).collect::<Vec<_>>(),
        "rate_limited_per_minute": f.refused_per_minute,
        "now_unix_ms": f.now_unix_ms,
    })
}

async fn status(socket: &Path, prefix: &str) -> Option<pb::StatusResponse> {
    let ask = async {
        let mut c = llmctl_client::connect(socket).await.ok()?;
        c.status(pb::StatusRequest {
            key_prefix: prefix.to_string(),
        })
        .await
        .ok()
        .map(|r| r.into_inner())
    };
    tokio::time::timeout(DEADLINE, ask).await.ok().flatten()
}

pub async fn run(args: StatuslineArgs, socket: PathBuf) -> ExitCode {
    // Claude Code writes its session's JSON on stdin; the line needs none of it, and never
    // waits for it.
    let out = match status(&socket, &args.prefix).await {
        Some(mut st) => {
            llmctl_proto::text::clean_status(&mut st);
            let f = figures(&st);
            if args.json {
                figures_json(&f).to_string()
            } else {
                line(&f)
            }
        }
        // No daemon: a quiet word, and success (a status line shows it as it is).
        None if args.json => json!({"daemon": false}).to_string(),
        None => "llmctl off".to_string(),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{out}");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(name: &str, used: f64, resets_in_ms: i64, closed: bool) -> pb::PlanWindow {
        pb::PlanWindow {
            name: name.into(),
            label: name.into(),
            used,
            resets_at_unix_ms: if resets_in_ms > 0 {
                1_000_000 + resets_in_ms
            } else {
                0
            },
            closed,
            ..Default::default()
        }
    }

    #[test]
    fn each_accounts_windows_show_once_with_their_use_and_time_to_reset() {
        let st = pb::StatusResponse {
            now_unix_ms: 1_000_000,
            keys: vec![
                pb::KeyStatus {
                    key: "anthropic/opus".into(),
                    plan_windows: vec![
                        window("5h", 0.8, 2 * 3_600_000 + 600_000, false),
                        window("7d", 0.41, 3 * 86_400_000 + 4 * 3_600_000, false),
                    ],
                    rate_limited_per_minute: 2.0,
                    ..Default::default()
                },
                pb::KeyStatus {
                    key: "anthropic/sonnet".into(),
                    plan_windows: vec![window("5h", 0.83, 2 * 3_600_000 + 600_000, false)],
                    rate_limited_per_minute: 1.0,
                    ..Default::default()
                },
                pb::KeyStatus {
                    key: "codex/gpt-5.5".into(),
                    plan_windows: vec![window("5h", 1.0, 45 * 60_000, true)],
                    ..Default::default()
                },
                pb::KeyStatus {
                    key: "openai/gpt-5.5".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let f = figures(&st);
        assert_eq!(
            line(&f),
            "anthropic 5h 83% 2h10m · 7d 41% 3d4h · codex 5h closed 45m · 429/min 3"
        );
        let j = figures_json(&f);
        assert_eq!(j["windows"].as_array().map(Vec::len), Some(3));
        assert_eq!(j["rate_limited_per_minute"], 3.0);
        assert_eq!(line(&Figures::default()), "429/min 0");
    }
}
