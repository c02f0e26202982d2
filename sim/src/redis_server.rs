//! A redis-server of its own on a Unix socket in a temporary folder, for the fleet scenario,
//! the bench and the tests: started on demand, stopped (and its folder removed) when dropped,
//! and able to stop and start again on the same socket.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How to get redis-server when it is missing.
pub const INSTALL_HINT: &str =
    "install redis-server (apt-get install redis-server; the project's scripts/test does)";

pub struct RedisServer {
    child: Option<Child>,
    dir: PathBuf,
}

impl RedisServer {
    /// Starts one and waits until it listens; an error names what to do when redis-server is
    /// not installed.
    pub fn start() -> Result<RedisServer, String> {
        Self::start_if_installed()?
            .ok_or_else(|| format!("redis-server is not installed: {INSTALL_HINT}"))
    }

    /// None when redis-server is not installed.
    pub fn start_if_installed() -> Result<Option<RedisServer>, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "llmctl-redis-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let mut r = RedisServer { child: None, dir };
        match r.restart() {
            Ok(()) => Ok(Some(r)),
            Err(None) => Ok(None),
            Err(Some(e)) => Err(e),
        }
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.join("redis.sock")
    }

    /// `unix:///…/redis.sock`, for `[fleet] redis`.
    pub fn url(&self) -> String {
        format!("unix://{}", self.socket().display())
    }

    /// Starts it (again) on the same socket. Err(None): redis-server is not installed.
    pub fn restart(&mut self) -> Result<(), Option<String>> {
        let child = match Command::new("redis-server")
            .args(["--port", "0", "--save", "", "--appendonly", "no"])
            .args(["--unixsocketperm", "700", "--unixsocket"])
            .arg(self.socket())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
            Err(e) => return Err(Some(format!("cannot start redis-server: {e}"))),
        };
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::os::unix::net::UnixStream::connect(self.socket()).is_err() {
            if Instant::now() > deadline {
                return Err(Some(
                    "redis-server did not open its socket within 10 s".into(),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    fn signal(&self, signal: rustix::process::Signal) {
        let pid = self
            .child
            .as_ref()
            .and_then(|c| rustix::process::Pid::from_raw(c.id() as i32));
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }

    /// SIGSTOP: connections stay open and nothing is answered until thawed.
    pub fn freeze(&self) {
        self.signal(rustix::process::Signal::STOP);
    }

    pub fn thaw(&self) {
        self.signal(rustix::process::Signal::CONT);
    }

    /// Stops it (SIGKILL: as if its host went away).
    pub fn stop(&mut self) {
        self.thaw();
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(self.socket());
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
