//! `exec` carries every API key on the host: it hands them only to a proxy it can prove is the
//! user's own. Another user listening first on the proxy's port (and answering its health path
//! as a proxy would) gets nothing, whether it was found at `[proxy] listen`, named by
//! `LLMCTL_PROXY_URL` or given with `--proxy`.

use crate::harness::*;
use llmctl_sim::provider::{FakeProvider, ProviderConfig};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// Another user's process on a free loopback port that passes for an llmctl proxy and writes
/// down every request it gets, with its credentials.
struct Impostor {
    child: Child,
    url: String,
    log: std::path::PathBuf,
}

const IMPOSTOR: &str = r#"
import http.server, sys
log = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        n = int(self.headers.get("content-length") or 0)
        self.rfile.read(n)
        with open(log, "a") as f:
            f.write(f"{self.command} {self.path} {self.headers.get('authorization')}\n")
        body = b'{"proxy":"llmctl"}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST = answer
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;

impl Impostor {
    fn start(dir: &std::path::Path) -> Impostor {
        let log = dir.join("impostor.log");
        std::fs::write(&log, "").expect("log");
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        let mut child = Command::new("python3")
            .args(["-c", IMPOSTOR])
            .arg(&log)
            .uid(65534)
            .gid(65534)
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 as nobody");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("its port");
        let url = format!("http://127.0.0.1:{}", line.trim());
        Impostor { child, url, log }
    }

    fn heard(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Impostor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const SECRET: &str = "sk-the-users-own-secret";

/// `llmctl exec` with the proxy config at `config`, running a curl of the chat API with the
/// user's key; `env` added.
fn exec(d: &Daemon, config: &std::path::Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let script = r#"curl -s "$OPENAI_BASE_URL/chat/completions" -H "authorization: Bearer $OPENAI_API_KEY" -H 'content-type: application/json' -d '{"model":"gpt-t","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}'"#;
    let mut c = Command::new(BIN);
    c.args(["exec", "--verbose", "--config"])
        .arg(config)
        .arg("--socket")
        .arg(&d.socket)
        .args(extra)
        .args(["--", "sh", "-c", script])
        .env("OPENAI_API_KEY", SECRET)
        .env_remove("LLMCTL_PROXY_URL")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_BASE");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("exec")
}

#[test]
fn exec_hands_credentials_only_to_a_proxy_of_the_users_own() {
    if !is_root() {
        eprintln!("skipped: acting as another user needs root");
        return;
    }
    let d = Daemon::start("");
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let p: FakeProvider = rt.block_on(async {
        let config = ProviderConfig {
            latency: Duration::from_millis(5),
            ..ProviderConfig::default()
        };
        FakeProvider::start(config, "127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("provider")
    });
    let dir = tempfile::tempdir().expect("dir");
    let impostor = Impostor::start(dir.path());
    // It would pass the health check that was all exec asked before.
    let health = Command::new("curl")
        .args(["-s", &format!("{}/_llmctl/health", impostor.url)])
        .output()
        .expect("curl");
    assert!(String::from_utf8_lossy(&health.stdout).contains(r#""proxy":"llmctl""#));
    let config = dir.path().join("proxy.toml");
    let port = impostor.url.rsplit(':').next().unwrap_or("");
    std::fs::write(
        &config,
        format!(
            "[proxy]\nlisten = \"127.0.0.1:{port}\"\n[proxy.upstreams.openai]\nurl = \"{}\"\n",
            p.url()
        ),
    )
    .expect("config");

    // 1. Found at [proxy] listen: passed over, and a private proxy serves the command.
    let o = exec(&d, &config, &[], &[]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("chat.completion"), "{out}\n{err}");
    assert!(
        err.contains("belongs to uid 65534") && err.contains("a private proxy"),
        "--verbose says why: {err}"
    );
    assert_eq!(
        p.provider.stats().requests,
        1,
        "served by the user's upstream"
    );

    // 1b. A base URL of the user's environment under it (the shared proxy it meant is down,
    // and another user took the port): refused, nothing run.
    let under = format!("{}/openai/v1", impostor.url);
    let o = exec(&d, &config, &[], &[("OPENAI_BASE_URL", &under)]);
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("OPENAI_BASE_URL") && stderr(&o).contains("[proxy] listen"),
        "{}",
        stderr(&o)
    );
    assert_eq!(p.provider.stats().requests, 1);

    // 2. Named by LLMCTL_PROXY_URL alone: passed over the same way.
    let o = exec(&d, &config, &[], &[("LLMCTL_PROXY_URL", &impostor.url)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not using LLMCTL_PROXY_URL"),
        "{}",
        stderr(&o)
    );
    assert_eq!(p.provider.stats().requests, 2);

    // 3. LLMCTL_PROXY_URL with a base URL under it (an exec whose proxy another user took
    // over): refused, nothing run.
    let o = exec(
        &d,
        &config,
        &[],
        &[
            ("LLMCTL_PROXY_URL", &impostor.url),
            ("OPENAI_BASE_URL", &under),
        ],
    );
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("OPENAI_BASE_URL") && stderr(&o).contains("uid 65534"),
        "{}",
        stderr(&o)
    );

    // 4. --proxy naming it: refused, nothing run.
    let o = exec(&d, &config, &["--proxy", &impostor.url], &[]);
    assert_eq!(o.status.code(), Some(69), "{}", stderr(&o));
    assert!(stderr(&o).contains("uid 65534"), "{}", stderr(&o));
    assert_eq!(p.provider.stats().requests, 2);

    // The other user's process never heard from exec, the key least of all.
    let heard = impostor.heard();
    assert!(!heard.contains(SECRET), "{heard}");
    assert!(!heard.contains("POST"), "{heard}");

    // The user's own proxy at [proxy] listen is used, and named by --proxy too.
    let own = rt.block_on(crate::proxy::proxy_for(&d, &p.url(), ""));
    let own_port = own.url().rsplit(':').next().unwrap_or("").to_string();
    std::fs::write(
        &config,
        format!(
            "[proxy]\nlisten = \"127.0.0.1:{own_port}\"\n[proxy.upstreams.openai]\nurl = \"{}\"\n",
            p.url()
        ),
    )
    .expect("config");
    let o = exec(&d, &config, &[], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("through {} (the proxy there)", own.url())),
        "{}",
        stderr(&o)
    );
    let o = exec(&d, &config, &["--proxy", &own.url()], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(p.provider.stats().requests, 4);
    rt.block_on(own.stop());
}
