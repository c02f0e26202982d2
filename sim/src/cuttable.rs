//! A Unix-socket way to a server (Redis) that can be cut, its connections dropped and new ones
//! refused, and healed again, while the process that uses it keeps running: a partition of one
//! host, for the fleet's fault scenarios and tests.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

pub struct Cuttable {
    path: PathBuf,
    target: PathBuf,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Cuttable {
    /// A way at `path` to the server listening on `target`, open from the start. Needs a
    /// Tokio runtime.
    pub fn new(target: PathBuf, path: PathBuf) -> std::io::Result<Cuttable> {
        let c = Cuttable {
            path,
            target,
            tasks: Arc::default(),
        };
        c.heal()?;
        Ok(c)
    }

    /// `unix:///…`, for `[fleet] redis`.
    pub fn url(&self) -> String {
        format!("unix://{}", self.path.display())
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, Vec<JoinHandle<()>>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the way (again).
    pub fn heal(&self) -> std::io::Result<()> {
        let _ = std::fs::remove_file(&self.path);
        let listener = tokio::net::UnixListener::bind(&self.path)?;
        let (target, tasks) = (self.target.clone(), self.tasks.clone());
        let accept = tokio::spawn(async move {
            while let Ok((mut down, _)) = listener.accept().await {
                let target = target.clone();
                let conn = tokio::spawn(async move {
                    if let Ok(mut up) = tokio::net::UnixStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
                    }
                });
                tasks.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
            }
        });
        self.tasks().push(accept);
        Ok(())
    }

    /// Cuts it: every connection through it dropped, none accepted until healed.
    pub fn cut(&self) {
        for t in self.tasks().drain(..) {
            t.abort();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Drop for Cuttable {
    fn drop(&mut self) {
        self.cut();
    }
}
