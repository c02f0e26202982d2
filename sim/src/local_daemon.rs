//! A daemon of its own in a temporary folder, for the simulator, the demo and the bench: this
//! executable's `llmctl daemon`, stopped and its folder removed when dropped.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

pub struct LocalDaemon {
    child: tokio::process::Child,
    pub dir: PathBuf,
    pub socket: PathBuf,
}

impl LocalDaemon {
    /// Writes `config` into a fresh `dir`, starts the daemon there and waits until it answers.
    pub async fn start(exe: &Path, dir: PathBuf, config: &str) -> Result<LocalDaemon, String> {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let cfg = dir.join("config.toml");
        std::fs::write(&cfg, config).map_err(|e| format!("cannot write {}: {e}", cfg.display()))?;
        let socket = dir.join("llmctl.sock");
        let child = tokio::process::Command::new(exe)
            .arg("daemon")
            .arg("--socket")
            .arg(&socket)
            .arg("--data-dir")
            .arg(dir.join("state"))
            .arg("--config")
            .arg(&cfg)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start a daemon: {e}"))?;
        let daemon = LocalDaemon { child, dir, socket };
        let deadline = Instant::now() + Duration::from_secs(10);
        while llmctl_client::connect(&daemon.socket).await.is_err() {
            if Instant::now() > deadline {
                return Err("the daemon did not start within 10 s".into());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(daemon)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

impl Drop for LocalDaemon {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
