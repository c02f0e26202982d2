//! `llmctl demo`: a temporary daemon, two fake providers and a few client processes whose load
//! would be a 429 storm without llmctl, watched with `top`; everything stops and its files go
//! when it ends.

use crate::exit;
use clap::Args;
use llmctl_client::pb;
use llmctl_sim::local_daemon::LocalDaemon;
use llmctl_sim::provider::{FakeProvider, Fault, Limits, ProviderConfig, RetryAfter};
use llmctl_sim::simulate::{Job, ProviderStyle, Strategy, WorkerSpec};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Run this long without the dashboard, then print one frame and stop (for scripts)
    #[arg(long, value_name = "DUR", value_parser = super::duration)]
    duration: Option<Duration>,
}

/// Everything the demo started; dropping it stops the processes and removes the folder.
struct DemoRun {
    dir: PathBuf,
    children: Vec<tokio::process::Child>,
    daemon: Option<LocalDaemon>,
    _providers: Vec<FakeProvider>,
}

impl Drop for DemoRun {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.start_kill();
        }
        self.daemon = None;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const GPT: &str = "demo/gpt";
const CLAUDE: &str = "demo/claude";

fn provider_config(rpm: f64, burst: f64, faults: &[&str]) -> ProviderConfig {
    ProviderConfig {
        limits: Limits {
            per_minute: [Some(rpm), Some(rpm * 1000.0), None, None],
            burst: [Some(burst), None, None, None],
        },
        count_rejected: true,
        retry_after: RetryAfter::Seconds,
        latency: Duration::from_millis(250),
        completion_tokens: 60,
        cache_share: 0.0,
        faults: faults.iter().filter_map(|f| Fault::parse(f).ok()).collect(),
        limit_headers: true,
        external_share: 0.0,
        ..ProviderConfig::default()
    }
}

/// SIGHUP, SIGINT and SIGTERM, listened for from the demo's first moment: one that comes while
/// it starts waits until everything it started can be stopped.
struct StopSignals(Option<[tokio::signal::unix::Signal; 3]>);

impl StopSignals {
    fn listen() -> StopSignals {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::hangup()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(hup), Ok(int), Ok(term)) => StopSignals(Some([hup, int, term])),
            _ => StopSignals(None),
        }
    }

    /// The number of the first to come (never, if they could not be listened for).
    async fn next(&mut self) -> u8 {
        let Some([hup, int, term]) = &mut self.0 else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = hup.recv() => 1,
            _ = int.recv() => 2,
            _ = term.recv() => 15,
        }
    }
}

async fn spawn_worker(exe: &Path, spec: &WorkerSpec) -> Result<tokio::process::Child, String> {
    let mut child = tokio::process::Command::new(exe)
        .arg("simulate-worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start a demo client: {e}"))?;
    let input = serde_json::to_vec(spec).map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(&input).await.map_err(|e| e.to_string())?;
    }
    Ok(child)
}

async fn start(exe: &Path) -> Result<(DemoRun, PathBuf), String> {
    let dir = std::env::temp_dir().join(format!("llmctl-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut run = DemoRun {
        dir: dir.clone(),
        children: Vec::new(),
        daemon: None,
        _providers: Vec::new(),
    };
    let addr = "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?;
    // gpt: 10 requests/s, its limit configured in the daemon. claude: 2 requests/s that the
    // daemon only learns from the provider's headers, and some 429s injected, so cooldowns show.
    let gpt = FakeProvider::start(provider_config(600.0, 10.0, &[]), addr)
        .await
        .map_err(|e| e.to_string())?;
    let claude = FakeProvider::start(
        provider_config(120.0, 2.0, &["rate_limit,retry_after=3,share=0.03"]),
        addr,
    )
    .await
    .map_err(|e| e.to_string())?;
    let text = format!(
        "[keys.{GPT:?}]\nrequests_per_minute = 600\nburst_requests = 10\nmax_concurrency = 24\n"
    );
    let daemon = LocalDaemon::start(exe, dir.join("daemon"), &text).await?;
    let socket = daemon.socket.clone();
    run.daemon = Some(daemon);
    let now = llmctl_client::time::now_unix_ms();
    let jobs = |n: usize, priority: i32| {
        (0..n)
            .map(|i| Job {
                input_tokens: [200, 800, 1500][i % 3],
                max_tokens: 200,
                priority,
                interactive: priority > 0,
                arrive_ms: 0,
                undeclared: false,
            })
            .collect::<Vec<_>>()
    };
    let spec = |url: String, key: &str, workers: usize, priority: i32| WorkerSpec {
        provider_url: url,
        style: ProviderStyle::Openai,
        strategy: Strategy::Llmctl,
        workers,
        jobs: jobs(100_000, priority),
        socket: Some(socket.clone()),
        key: key.to_string(),
        local_limits: None,
        start_at_unix_ms: now,
        deadline_unix_ms: now + 24 * 3_600_000,
        max_attempts: 8,
        fail_open_at_once: false,
    };
    // 30 workers on gpt (three processes, one of them interactive) and 8 on claude.
    for (key, url, workers, priority) in [
        (GPT, gpt.url(), 12, 0),
        (GPT, gpt.url(), 12, 0),
        (GPT, gpt.url(), 6, 10),
        (CLAUDE, claude.url(), 8, 0),
    ] {
        run.children
            .push(spawn_worker(exe, &spec(url, key, workers, priority)).await?);
    }
    run._providers = vec![gpt, claude];
    Ok((run, socket))
}

pub async fn run(args: DemoArgs) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return exit::fail(exit::SOFTWARE, format!("cannot find this executable: {e}")),
    };
    if args.duration.is_none() && !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return exit::fail(
            exit::USAGE,
            "llmctl demo opens the dashboard on a terminal and stdout is not one; give --duration 10s for a plain run",
        );
    }
    let mut signals = StopSignals::listen();
    let (demo, socket) = match start(&exe).await {
        Ok(x) => x,
        Err(e) => return exit::fail(exit::SOFTWARE, e),
    };
    let shown = async {
        match args.duration {
            Some(d) => {
                tokio::time::sleep(d).await;
                match llmctl_client::connect(&socket).await {
                    Ok(mut c) => match c.status(pb::StatusRequest::default()).await {
                        Ok(st) => {
                            println!(
                                "{}",
                                llmctl_tui::once_text(
                                    st.into_inner(),
                                    &socket.display().to_string()
                                )
                            );
                            ExitCode::SUCCESS
                        }
                        Err(s) => exit::status(&s),
                    },
                    Err(e) => exit::fail(exit::UNAVAILABLE, e),
                }
            }
            None => {
                let options = llmctl_tui::Options {
                    socket: socket.clone(),
                    interval: Duration::from_secs(1),
                    key_prefix: String::new(),
                };
                match llmctl_tui::run(options).await {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => exit::fail(exit::SOFTWARE, e),
                }
            }
        }
    };
    // A closed terminal (SIGHUP), Ctrl-C outside the dashboard (SIGINT) or SIGTERM stops the
    // demo as its end does: the dashboard gives the terminal back, everything started stops
    // and the folder goes.
    // The dashboard stops on SIGINT and SIGTERM too: the signal is looked at first, so the
    // exit status says it.
    let code = tokio::select! {
        biased;
        signal = signals.next() => ExitCode::from(128 + signal),
        code = shown => code,
    };
    let dir = demo.dir.clone();
    drop(demo);
    eprintln!("demo stopped; removed {}", dir.display());
    code
}
