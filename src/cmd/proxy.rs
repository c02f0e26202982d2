//! `llmctl proxy` (the providers' APIs on loopback, limited by the daemon) and `llmctl exec`
//! (a command run with the SDKs' base-URL variables pointed at a proxy).

use crate::exit;
use clap::Args;
use llmctl_proxy::config::parse_listen;
use llmctl_proxy::exec::{self, agents as exec_agents, env as exec_env};
use llmctl_proxy::{ProxyConfig, Running};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ProxyArgs {
    /// Listen here: HOST:PORT, or a bare port on 127.0.0.1 [default: [proxy] listen, else 127.0.0.1:8790]
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    listen: Option<SocketAddr>,
    /// Config file whose [proxy] table to read [default: $XDG_CONFIG_HOME/llmctl/config.toml, if it exists]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ExecArgs {
    /// The proxy to use [default: the one at [proxy] listen; a private one on a free port when none answers there]
    #[arg(long, value_name = "URL")]
    proxy: Option<String>,
    /// Config file whose [proxy] table to read [default: $XDG_CONFIG_HOME/llmctl/config.toml, if it exists]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Say on stderr which variables were set, to what, and where their requests go
    #[arg(long, short)]
    verbose: bool,
    /// The command and its arguments
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CodexShimArgs {
    /// Codex's own arguments
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// What the `codex` shim on an `exec`'s PATH runs: the real Codex (the first on PATH that is no
/// shim) with the proxy's route for it (`LLMCTL_CODEX_BASE_URL`), in this process's place.
pub fn codex_shim(args: CodexShimArgs) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let env = |k: &str| std::env::var(k).ok();
    let path = env("PATH").unwrap_or_default();
    let Some(real) = exec_agents::find_program("codex", &path) else {
        return exit::fail(
            127,
            "codex: command not found on PATH (past llmctl exec's shim); install it with `npm i -g @openai/codex`",
        );
    };
    let argv = match (env("LLMCTL_CODEX_BASE_URL"), env("LLMCTL_PROXY_URL")) {
        (Some(base), Some(proxy)) => {
            let (argv, note) = exec_agents::shimmed(&args.args, &real, &proxy, &base, &env);
            if let Some(n) = note {
                eprintln!("{n}");
            }
            argv
        }
        // Not under exec (a shim left behind): Codex as it was asked for.
        _ => std::iter::once(real.display().to_string())
            .chain(args.args)
            .collect(),
    };
    let err = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
    exit::fail(
        126,
        format!("codex-shim: running {}: {err}", real.display()),
    )
}

/// A directory of shims put first on a command's PATH, removed when dropped.
struct Shims(PathBuf);

impl Shims {
    /// `codex` → `llmctl codex-shim`, in a new private directory.
    fn codex() -> std::io::Result<Shims> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("llmctl-exec-{}-{nanos:09}", std::process::id()));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let shims = Shims(dir);
        let llmctl = std::env::current_exe()?;
        let shim = shims.0.join("codex");
        std::fs::write(&shim, exec_agents::shim_script(&llmctl))?;
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755))?;
        Ok(shims)
    }
}

impl Drop for Shims {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn load(config: Option<PathBuf>) -> Result<ProxyConfig, ExitCode> {
    let env = |k: &str| std::env::var(k).ok();
    let path = config.or_else(|| llmctl_daemon::paths::config_file(&env).filter(|p| p.exists()));
    match &path {
        Some(p) => ProxyConfig::load(p).map_err(|e| exit::fail(exit::USAGE, e)),
        None => Ok(ProxyConfig::default()),
    }
}

pub async fn proxy(args: ProxyArgs, socket: PathBuf) -> ExitCode {
    super::daemon::init_logging();
    let mut config = match load(args.config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Some(addr) = args.listen {
        config.listen = addr;
    }
    let upstreams: Vec<String> = config
        .upstreams
        .values()
        .map(|u| format!("/{} -> {}", u.name, u.url))
        .collect();
    let bound = match llmctl_proxy::bind(config, socket.clone()).await {
        Ok(b) => b,
        Err(e @ llmctl_proxy::ProxyError::Bind { .. }) => return exit::fail(exit::UNAVAILABLE, e),
        Err(e) => return exit::fail(exit::USAGE, e),
    };
    tracing::info!(
        "llmctl proxy listening on http://{} ({}); limiting with the daemon on {}",
        bound.addr,
        upstreams.join(", "),
        socket.display()
    );
    bound.serve(super::daemon::stop_signal()).await;
    tracing::info!("llmctl proxy stopped");
    ExitCode::SUCCESS
}

pub async fn exec(args: ExecArgs, socket: PathBuf) -> ExitCode {
    let mut config = match load(args.config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let env = |k: &str| std::env::var(k).ok();
    let configured = format!("http://{}", config.listen);
    // What --verbose says of proxies found and not used.
    let mut passed_over: Vec<String> = Vec::new();
    // The shared proxy is used only when it is the user's own and answers; a variable under a
    // proxy that is not running (or not the user's) is no proxy's: it is pointed anew. So is
    // the proxy of an `exec` this one runs under (`LLMCTL_PROXY_URL`). A variable pointing
    // under one that is not to be trusted stops the command.
    let inherited = env("LLMCTL_PROXY_URL")
        .map(|u| u.trim().to_string())
        .filter(|u| !u.is_empty());
    let mut trusted = Vec::new();
    for (url, what) in [
        (Some(configured.clone()), "[proxy] listen"),
        (inherited, "LLMCTL_PROXY_URL"),
    ] {
        let Some(url) = url else { continue };
        match exec::found(&url, what, &env).await {
            exec::Found::Trusted => trusted.push(url),
            exec::Found::PassedOver(why) => passed_over.push(why),
            exec::Found::Refused(e) => return exit::fail(exit::USAGE, format!("exec: {e}")),
        }
    }
    let shared = trusted.contains(&configured);
    let proxies: Vec<String> = trusted.into_iter().chain(args.proxy.clone()).collect();
    let mut plan = match exec_env::plan(&env, &config, &proxies) {
        Ok(p) => p,
        Err(e) => return exit::fail(exit::USAGE, format!("exec: {e}")),
    };
    // Codex's own base URL under [proxy] listen, where no proxy of the user's answers, is
    // refused as a variable's is.
    let untrusted =
        |d: Option<&str>| !shared && d.is_some_and(|u| exec_env::is_under(u, &configured));
    // Codex reads no variable: it gets a -c override, its route going where it would have gone.
    let codex = match exec_agents::codex(&args.command, &env) {
        Some(c) if untrusted(c.destination.as_deref()) => {
            return exit::fail(
                exit::USAGE,
                format!(
                    "exec: Codex's openai_base_url ({}) is under [proxy] listen ({configured}), where no proxy of yours answers; start yours there with `llmctl proxy`, or change it",
                    exec_env::redact(c.destination.as_deref().unwrap_or(""))
                ),
            )
        }
        Some(c) => {
            let url = c.destination.as_deref();
            match plan.route_for(&config, llmctl_proxy::Api::OpenAi, url, &proxies) {
                Ok(v) => Some((c, v)),
                Err(e) => {
                    return exit::fail(
                        exit::USAGE,
                        format!(
                            "exec: Codex's openai_base_url ({}) {e}",
                            exec_env::redact(url.unwrap_or(""))
                        ),
                    )
                }
            }
        }
        None => None,
    };
    // A Codex that a script or a shell starts reads no variable either: a shim first on the
    // command's PATH points it at the proxy, on the route to where it would go by default.
    // (A Codex config exec cannot follow stops only a command that runs Codex itself; for a
    // Codex the command may start, the shim is left out and --verbose says why.)
    let path = env("PATH").unwrap_or_default();
    let shimmed_codex = exec_agents::find_program("codex", &path)
        .and_then(|_| exec_agents::codex(&["codex".to_string()], &env))
        .and_then(|c| {
            let url = c.destination.clone();
            let why = if untrusted(url.as_deref()) {
                format!("is under [proxy] listen ({configured}), where no proxy of yours answers")
            } else {
                match plan.route_for(&config, llmctl_proxy::Api::OpenAi, url.as_deref(), &proxies) {
                    Ok(v) => return Some((c, v)),
                    Err(e) => e,
                }
            };
            passed_over.push(format!(
                "a codex shim: Codex's openai_base_url ({}) {why}",
                exec_env::redact(url.as_deref().unwrap_or(""))
            ));
            None
        });
    let mut private: Option<Running> = None;
    let url = match &args.proxy {
        Some(u) => {
            if !u.starts_with("http://") {
                return exit::fail(
                    exit::USAGE,
                    format!("--proxy {u}: give the proxy's http:// URL, like http://127.0.0.1:8790 (it serves plain HTTP on loopback)"),
                );
            }
            if let Some(r) = plan.routes.first() {
                let var = plan
                    .settings
                    .iter()
                    .find(|s| s.destination.trim_end_matches('/') == r.url)
                    .map(|s| s.name)
                    .unwrap_or("a base-URL variable");
                return exit::fail(
                    exit::USAGE,
                    format!("exec: the command's environment sends {var} to {url}, which no upstream in [proxy.upstreams] serves; add one with url = \"{url}\" to the config of the proxy at {u}, or leave out --proxy (a private proxy then gets a route to it)", url = exec_env::redact(&r.url)),
                );
            }
            if let Err(why) = exec::vouch(u).await {
                return exit::fail(
                    exit::UNAVAILABLE,
                    format!("--proxy {u}: {why}; start your own with `llmctl proxy`, or leave out --proxy to run a private one"),
                );
            }
            u.trim_end_matches('/').to_string()
        }
        // The shared proxy serves every destination: use it.
        None if plan.routes.is_empty() && shared => configured,
        None => {
            config.listen = SocketAddr::from(([127, 0, 0, 1], 0));
            for r in &plan.routes {
                config.upstreams.insert(r.name.clone(), r.clone());
            }
            match Running::start(config.clone(), socket.clone()).await {
                Ok(r) => {
                    let u = r.url();
                    private = Some(r);
                    u
                }
                Err(e) => return exit::fail(exit::USAGE, format!("starting a private proxy: {e}")),
            }
        }
    };
    let mut vars = plan.env(&url);
    let mut shims = None;
    if let Some((c, value)) = &shimmed_codex {
        let base = match value {
            exec_env::Value::Proxy(p) => Some(format!("{url}{p}")),
            _ => c.destination.clone(),
        };
        match (base, Shims::codex()) {
            (Some(base), Ok(s)) => {
                if args.verbose {
                    eprintln!(
                        "llmctl exec: a codex started by the command runs with -c openai_base_url=\"{base}\" (a shim first on its PATH, to {})",
                        exec_env::redact(c.destination.as_deref().unwrap_or("the OpenAI API"))
                    );
                }
                vars.push(("PATH", format!("{}:{path}", s.0.display())));
                vars.push(("LLMCTL_CODEX_BASE_URL", base));
                shims = Some(s);
            }
            (_, Err(e)) => eprintln!("llmctl exec: no codex shim ({e}): a codex the command starts itself is not limited"),
            (None, _) => {}
        }
    }
    if args.verbose {
        let how = if private.is_some() {
            "a private proxy, for the command's lifetime"
        } else {
            "the proxy there"
        };
        for why in &passed_over {
            eprintln!("llmctl exec: not using {why}");
        }
        eprintln!("llmctl exec: requests limited through {url} ({how}):");
        for s in &plan.settings {
            let value = vars
                .iter()
                .find(|(k, _)| *k == s.name)
                .map(|(_, v)| v.as_str());
            let was = match &s.was {
                Some(w) => format!("was {}", exec_env::redact(w)),
                None => "was unset".to_string(),
            };
            match value {
                Some(v) => eprintln!(
                    "  {}={}  ({was}; to {})",
                    s.name,
                    exec_env::redact(v),
                    exec_env::redact(&s.destination)
                ),
                None => eprintln!("  {} kept ({was}: an llmctl proxy already)", s.name),
            }
        }
    }
    let command = match &codex {
        Some((c, exec_env::Value::Proxy(path))) => {
            let base = format!("{url}{path}");
            if args.verbose {
                eprintln!(
                    "  codex -c openai_base_url=\"{base}\"  (to {}, from {})",
                    exec_env::redact(c.destination.as_deref().unwrap_or("the OpenAI API")),
                    c.because
                );
            }
            c.rewrite(&args.command, &base)
        }
        Some((_, _)) => {
            if args.verbose {
                eprintln!("  codex kept (its openai_base_url is an llmctl proxy already)");
            }
            args.command.clone()
        }
        None => args.command.clone(),
    };
    let code = run_command(&command, &vars).await;
    drop(shims);
    if let Some(p) = private {
        p.stop().await;
    }
    code
}

/// Runs the command to its end with `env` added, passing on TERM and HUP (a terminal's INT and
/// QUIT reach it by themselves); its exit status is ours (128 + N when signal N ended it).
async fn run_command(command: &[String], env: &[(&'static str, String)]) -> ExitCode {
    use tokio::signal::unix::{signal, SignalKind};
    let Some((program, rest)) = command.split_first() else {
        return exit::fail(
            exit::USAGE,
            "exec: no command given; write `llmctl exec -- CMD ARGS…`",
        );
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(rest)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return exit::fail(127, format!("exec: {program}: command not found"))
        }
        Err(e) => return exit::fail(126, format!("exec: {program}: {e}")),
    };
    let pid = child
        .id()
        .and_then(|p| rustix::process::Pid::from_raw(p as i32));
    let stream = |kind: SignalKind| signal(kind).ok();
    let (mut int, mut term, mut hup, mut quit) = (
        stream(SignalKind::interrupt()),
        stream(SignalKind::terminate()),
        stream(SignalKind::hangup()),
        stream(SignalKind::quit()),
    );
    let status = loop {
        use rustix::process::Signal;
        // A terminal's Ctrl-C and Ctrl-\ reach the command itself (it is in the same process
        // group): they are only kept from stopping llmctl, never sent twice. TERM and HUP,
        // which may be meant for llmctl alone, are passed on.
        let passed = tokio::select! {
            status = child.wait() => break status,
            Some(()) = recv(&mut int) => None,
            Some(()) = recv(&mut quit) => None,
            Some(()) = recv(&mut term) => Some(Signal::TERM),
            Some(()) = recv(&mut hup) => Some(Signal::HUP),
        };
        if let (Some(pid), Some(signal)) = (pid, passed) {
            let _ = rustix::process::kill_process(pid, signal);
        }
    };
    match status {
        Ok(s) => {
            use std::os::unix::process::ExitStatusExt;
            match (s.code(), s.signal()) {
                (Some(c), _) => ExitCode::from(c.clamp(0, 255) as u8),
                (None, Some(sig)) => ExitCode::from((128 + sig).clamp(0, 255) as u8),
                _ => ExitCode::from(exit::SOFTWARE),
            }
        }
        Err(e) => exit::fail(exit::SOFTWARE, format!("exec: waiting for {program}: {e}")),
    }
}

async fn recv(s: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match s {
        Some(s) => s.recv().await,
        None => std::future::pending().await,
    }
}
