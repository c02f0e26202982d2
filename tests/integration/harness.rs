//! Starting and stopping a real daemon, and talking to it with the CLI or gRPC.

use llmctl_client::pb;
use llmctl_client::pb::limiter_client::LimiterClient;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use tonic::transport::Channel;

pub const BIN: &str = env!("CARGO_BIN_EXE_llmctl");

pub struct Daemon {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub data: PathBuf,
    pub config: PathBuf,
    pub child: Option<Child>,
}

impl Daemon {
    /// Starts a daemon with `config` (TOML) and waits until it answers.
    pub fn start(config: &str) -> Daemon {
        let mut d = Daemon::new(config);
        d.restart();
        d
    }

    /// A daemon's folders and config, not started yet.
    pub fn new(config: &str) -> Daemon {
        let dir = tempfile::tempdir().expect("temp dir");
        let socket = dir.path().join("run/llmctl.sock");
        let data = dir.path().join("state");
        let config_path = dir.path().join("config.toml");
        std::fs::write(&config_path, config).expect("write config");
        Daemon {
            dir,
            socket,
            data,
            config: config_path,
            child: None,
        }
    }

    /// Runs `llmctl daemon` on this daemon's data and config with another socket and `extra`
    /// flags until it exits (it is expected to refuse to start), with a time bound.
    pub fn run_other(&self, socket: &Path, extra: &[&str]) -> Output {
        let mut child = self
            .daemon_command(Command::new(BIN), socket)
            .args(extra)
            .spawn()
            .expect("spawn daemon");
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().expect("wait").is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the other daemon did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().expect("output")
    }

    /// The daemon's stderr so far is not readable while it runs; this stops it (SIGTERM) and
    /// returns what it wrote.
    pub fn stop_and_log(&mut self) -> String {
        String::from_utf8_lossy(&self.terminate().stderr).into_owned()
    }

    /// Starts (again) on the same socket, data and config.
    pub fn restart(&mut self) {
        self.restart_with(Command::new(BIN));
    }

    /// Starts with at most `n` open files (soft and hard), as a small system would allow.
    pub fn restart_with_file_limit(&mut self, n: u32) {
        let mut sh = Command::new("sh");
        sh.args(["-c", &format!("ulimit -n {n} && exec \"$0\" \"$@\""), BIN]);
        self.restart_with(sh);
    }

    /// `llmctl daemon` on `socket` with this daemon's data and config, stderr kept.
    fn daemon_command(&self, mut command: Command, socket: &Path) -> Command {
        command
            .arg("daemon")
            .arg("--socket")
            .arg(socket)
            .arg("--data-dir")
            .arg(&self.data)
            .arg("--config")
            .arg(&self.config)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    }

    /// Acquires (and reports) one request on `key` after another for `run_for`, answering at
    /// once; returns how many were granted.
    pub async fn grant_for(&self, key: &str, run_for: Duration) -> u64 {
        let started = Instant::now();
        let mut c = self.client().await;
        let mut n = 0;
        while started.elapsed() < run_for {
            let r = c.acquire(acquire_req(key)).await;
            if let Ok(r) = r.map(|r| r.into_inner()) {
                if r.granted {
                    n += 1;
                    let _ = c.report(report_req(&r.lease_id, 200)).await;
                }
            }
        }
        n
    }

    fn restart_with(&mut self, command: Command) {
        self.spawn_with(command);
        self.wait_answering();
    }

    /// Starts the daemon without waiting for it (several started at once).
    pub fn spawn(&mut self) {
        self.spawn_with(Command::new(BIN));
    }

    fn spawn_with(&mut self, command: Command) {
        let socket = self.socket.clone();
        let child = self
            .daemon_command(command, &socket)
            .spawn()
            .expect("spawn daemon");
        self.child = Some(child);
    }

    /// Waits until a daemon spawned answers on its socket.
    pub fn wait_answering(&self) {
        wait_until(Duration::from_secs(10), "the daemon to answer", || {
            std::os::unix::net::UnixStream::connect(&self.socket).is_ok()
        });
    }

    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM, then waits for the exit and returns it with stderr.
    pub fn terminate(&mut self) -> Output {
        let child = self.child.take().expect("running");
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success());
        child.wait_with_output().expect("wait")
    }

    pub fn cli(&self, args: &[&str]) -> Output {
        cli_on(&self.socket, args)
    }

    pub async fn client(&self) -> LimiterClient<Channel> {
        llmctl_client::connect(&self.socket).await.expect("connect")
    }

    pub async fn status(&self) -> pb::StatusResponse {
        let st = self
            .client()
            .await
            .status(pb::StatusRequest::default())
            .await
            .expect("status")
            .into_inner();
        typed_states_name_their_strings(&st);
        st
    }

    pub async fn key(&self, key: &str) -> pb::KeyStatus {
        let st = self.status().await;
        st.keys
            .into_iter()
            .find(|k| k.key == key)
            .unwrap_or_else(|| panic!("key {key} not in status"))
    }

    pub async fn level(&self, key: &str, dimension: &str) -> f64 {
        self.key(key)
            .await
            .buckets
            .iter()
            .find(|b| b.dimension == dimension)
            .unwrap_or_else(|| panic!("no {dimension} bucket on {key}"))
            .level
    }

    /// When the daemon last marked itself alive (`DIR/marker`), in Unix ms.
    pub fn marker_alive_ms(&self) -> Option<i64> {
        let text = std::fs::read_to_string(self.data.join("marker")).ok()?;
        text.split_whitespace()
            .find_map(|f| f.strip_prefix("alive="))?
            .parse()
            .ok()
    }

    /// Waits until a snapshot begun after `since_unix_ms` has been written: the writer marks
    /// the daemon alive, writes what changed, and only then marks it alive again.
    pub async fn wait_snapshot_after(&self, since_unix_ms: i64) {
        let mut seen: Option<i64> = None;
        eventually(Duration::from_secs(10), "two snapshot ticks", || {
            let alive = self.marker_alive_ms().filter(|a| *a > since_unix_ms);
            let done = matches!((seen, alive), (Some(s), Some(a)) if a > s);
            seen = seen.or(alive);
            async move { done }
        })
        .await;
    }

    /// Waits until `key`'s `dimension` bucket is full.
    pub async fn wait_full(&self, key: &str, dimension: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let k = self.key(key).await;
            let b = k
                .buckets
                .iter()
                .find(|b| b.dimension == dimension)
                .expect("bucket");
            if b.level >= b.capacity {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{key} {dimension} never filled: {b:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill9();
    }
}

pub fn cli_on(socket: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("LLMCTL_SOCKET", socket)
        .stdin(Stdio::null())
        .output()
        .expect("run llmctl")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Whether the tests run as root (then they may act as another user, `nobody`).
pub fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).trim().to_string()
}

pub fn wait_until(limit: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `f` until it holds, failing the test with `what` after `limit`.
pub async fn eventually<F, Fut>(limit: Duration, what: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    while !f().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn acquire_req(key: &str) -> pb::AcquireRequest {
    pb::AcquireRequest {
        key: key.into(),
        requests: 1,
        ..Default::default()
    }
}

pub fn report_req(lease: &str, status: i32) -> pb::ReportRequest {
    pb::ReportRequest {
        lease_id: lease.into(),
        status_code: status,
        attempt: 1,
        ..Default::default()
    }
}

/// A loopback TCP port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

pub fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Runs a future to completion from a plain test.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// A tmpfs of `size`, unmounted when dropped.
pub struct Tmpfs {
    pub dir: tempfile::TempDir,
}

impl Tmpfs {
    pub fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().expect("temp dir");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Tmpfs { dir })
    }

    /// Writes a file until the disk is full.
    pub fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.dir.path().join("filler");
        let mut f = std::fs::File::create(&path).expect("filler");
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Every typed state in a status is the code whose name the string beside it says (none for
/// an empty string): checked on every status the tests fetch.
pub fn typed_states_name_their_strings(st: &pb::StatusResponse) {
    fn name(code: &str) -> &str {
        if code == "unknown" {
            ""
        } else {
            code
        }
    }
    for k in &st.keys {
        for b in &k.buckets {
            assert_eq!(b.dimension_code().name(), b.dimension, "{b:?}");
            assert_eq!(b.period_code().name(), b.period, "{b:?}");
            assert_eq!(b.source_code().name(), b.source, "{b:?}");
            assert_eq!(b.capacity_source_code().name(), b.capacity_source, "{b:?}");
            assert_eq!(
                name(b.learned_source_code().name()),
                b.learned_source,
                "{b:?}"
            );
        }
        assert_eq!(k.breaker_code().name(), k.breaker, "{}", k.key);
        assert_eq!(name(k.provider_code().name()), k.provider, "{}", k.key);
        assert_eq!(
            k.output_counted_as_code().name(),
            k.output_counted_as,
            "{}",
            k.key
        );
        assert_eq!(
            k.output_counted_as_source_code().name(),
            k.output_counted_as_source,
            "{}",
            k.key
        );
        assert_eq!(
            name(k.concurrency_source_code().name()),
            k.concurrency_source,
            "{}",
            k.key
        );
    }
    for e in &st.events {
        assert_eq!(e.kind_code().name(), e.kind, "{e:?}");
    }
}

/// A CA of the test's own and a certificate for 127.0.0.1 and localhost signed by it.
pub struct TestCertificates {
    /// The CA's PEM, written to the folder given.
    pub ca: PathBuf,
    pub cert: rcgen::Certificate,
    pub key: rcgen::KeyPair,
}

impl TestCertificates {
    pub fn new(dir: &Path) -> TestCertificates {
        let ca_key = rcgen::KeyPair::generate().expect("key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        // A name of its own: a CA named as the certificate it signs reads, to OpenSSL (a
        // redis-server's cluster bus), as that certificate signing itself.
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "llmctl test CA");
        let ca_cert = ca_params.self_signed(&ca_key).expect("ca");
        let key = rcgen::KeyPair::generate().expect("key");
        let params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
                .expect("params");
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let cert = params.signed_by(&key, &issuer).expect("cert");
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, ca_cert.pem()).expect("write ca");
        TestCertificates { ca, cert, key }
    }
}
