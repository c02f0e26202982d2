//! A daemon of its own in a temporary folder, for the simulator, the demo and the bench: this
//! executable's `llmctl daemon`, stopped and its folder removed when dropped. The fault
//! scenarios also kill it (as a crash would), start it again on the same socket and state, and
//! freeze and thaw it.
//!
//! With `LLMCTL_SIM_DAEMON_LOGS=DIR` each daemon's log goes to `DIR/<its folder's name>.log`
//! (appended to across restarts), at `RUST_LOG`'s filter if set, else `info`; without it a
//! daemon logs only warnings, and nowhere.

use rustix::process::{kill_process, Pid, Signal};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

pub struct LocalDaemon {
    child: Option<tokio::process::Child>,
    exe: PathBuf,
    pub dir: PathBuf,
    pub socket: PathBuf,
    /// Where its log goes, and at which filter (None: nowhere).
    log: Option<(PathBuf, String)>,
}

/// The environment variable naming a folder for the daemons' logs.
pub const LOGS_ENV: &str = "LLMCTL_SIM_DAEMON_LOGS";

/// The folder for the daemons' logs and the filter they log at, from the environment.
fn logs_from_env() -> Option<(PathBuf, String)> {
    let dir = std::env::var_os(LOGS_ENV).filter(|d| !d.is_empty())?;
    let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into());
    Some((PathBuf::from(dir), filter))
}

impl LocalDaemon {
    /// Writes `config` into a fresh `dir`, starts the daemon there and waits until it answers.
    pub async fn start(exe: &Path, dir: PathBuf, config: &str) -> Result<LocalDaemon, String> {
        Self::start_logged(exe, dir, config, logs_from_env()).await
    }

    /// The same, its log in `log`'s folder at its filter (None: nowhere).
    pub async fn start_logged(
        exe: &Path,
        dir: PathBuf,
        config: &str,
        log: Option<(PathBuf, String)>,
    ) -> Result<LocalDaemon, String> {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let cfg = dir.join("config.toml");
        std::fs::write(&cfg, config).map_err(|e| format!("cannot write {}: {e}", cfg.display()))?;
        let socket = dir.join("llmctl.sock");
        let mut daemon = LocalDaemon {
            child: None,
            exe: exe.to_path_buf(),
            dir,
            socket,
            log,
        };
        daemon.restart().await?;
        Ok(daemon)
    }

    /// Starts it (again) on its socket, state and config, and waits until it answers.
    pub async fn restart(&mut self) -> Result<(), String> {
        let (filter, stderr) = match &self.log {
            None => ("warn".to_string(), Stdio::null()),
            Some((folder, filter)) => {
                let path = self.log_path(folder);
                let file = std::fs::create_dir_all(folder)
                    .and_then(|()| {
                        std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(&path)
                    })
                    .map_err(|e| {
                        format!(
                            "cannot open the daemon's log {} ({LOGS_ENV}): {e}",
                            path.display()
                        )
                    })?;
                (filter.clone(), Stdio::from(file))
            }
        };
        let child = tokio::process::Command::new(&self.exe)
            .arg("daemon")
            .arg("--socket")
            .arg(&self.socket)
            .arg("--data-dir")
            .arg(self.dir.join("state"))
            .arg("--config")
            .arg(self.dir.join("config.toml"))
            .env("RUST_LOG", filter)
            .stdin(Stdio::null())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start a daemon: {e}"))?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while llmctl_client::connect(&self.socket).await.is_err() {
            if Instant::now() > deadline {
                return Err("the daemon did not start within 10 s".into());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// Its log in `folder`: named after its own folder, which names the run and the host.
    fn log_path(&self, folder: &Path) -> PathBuf {
        let name = self
            .dir
            .file_name()
            .map_or_else(|| "daemon".into(), |n| n.to_string_lossy().into_owned());
        folder.join(format!("{name}.log"))
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(tokio::process::Child::id)
    }

    fn signal(&self, signal: Signal) {
        if let Some(pid) = self.pid().and_then(|p| Pid::from_raw(p as i32)) {
            let _ = kill_process(pid, signal);
        }
    }

    /// SIGKILL, as a crash: nothing flushed, the socket file left behind.
    pub async fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.start_kill();
            let _ = c.wait().await;
        }
    }

    /// SIGSTOP: it keeps its socket and answers nothing until thawed.
    pub fn freeze(&self) {
        self.signal(Signal::STOP);
    }

    pub fn thaw(&self) {
        self.signal(Signal::CONT);
    }
}

impl Drop for LocalDaemon {
    fn drop(&mut self) {
        // A frozen daemon must be able to die.
        self.thaw();
        if let Some(c) = self.child.as_mut() {
            let _ = c.start_kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
