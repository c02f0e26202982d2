//! The store behind bounds. Every disk operation runs on a blocking thread and is waited for at
//! most a bound; one still running past its bound leaves the store stalled until it returns, and
//! while it is stalled nothing else waits behind it (a full or failing disk must not wedge
//! Claims, snapshots or shutdown). sled refuses every write after one I/O error, so a store that
//! failed is closed and opened again before the next operation (once the disk has room, writes
//! resume). Failures are counted in metrics, shown by Status, and logged at most once per
//! `LOG_EVERY`.

use crate::metrics::Metrics;
use crate::store::{Store, StoreError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use thiserror::Error;

/// How long a Claim or Complete waits for the disk.
pub const CLAIM_BOUND: Duration = Duration::from_secs(2);
/// How long a snapshot or an expiry sweep waits for the disk.
pub const WRITE_BOUND: Duration = Duration::from_secs(5);
/// At most one log line per this, however often writes fail.
const LOG_EVERY: Duration = Duration::from_secs(30);

#[derive(Debug, Error)]
pub enum StorageError {
    #[error(
        "the state store is not answering: an earlier write in {dir} has not finished (is the \
         disk full or failing?)"
    )]
    Stalled { dir: String },
    #[error(
        "the state store did not finish {what} within {bound:?} (is the disk full or failing?)"
    )]
    TimedOut { what: &'static str, bound: Duration },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the store task for {what} failed: {message}")]
    Task { what: &'static str, message: String },
}

/// A failure seen, for Status.
#[derive(Clone, Debug, Default)]
pub struct Health {
    /// 0 while the last operation succeeded.
    pub failing_since_unix_ms: i64,
    pub error: String,
}

struct LogState {
    last: Option<Instant>,
    unlogged: u64,
}

/// The open store, or none while it is being opened again.
type Slot = Arc<RwLock<Option<Arc<Store>>>>;

pub struct Storage {
    dir: PathBuf,
    slot: Slot,
    /// The last operation failed: open the store again before the next.
    broken: AtomicBool,
    /// It was opened after the daemon started without it: what it holds is not restored yet.
    opened_late: AtomicBool,
    stalled: Arc<AtomicBool>,
    failing_since: AtomicI64,
    error: Mutex<String>,
    log: Mutex<LogState>,
    metrics: Option<Arc<Metrics>>,
}

impl Storage {
    /// The store, or none when it could not be opened at start (it is then opened before the
    /// first operation that finds the disk willing).
    pub fn new(store: Option<Store>, dir: &Path, metrics: Option<Arc<Metrics>>) -> Storage {
        let missing = store.is_none();
        Storage {
            dir: dir.to_path_buf(),
            slot: Arc::new(RwLock::new(store.map(Arc::new))),
            broken: AtomicBool::new(missing),
            opened_late: AtomicBool::new(false),
            stalled: Arc::new(AtomicBool::new(false)),
            failing_since: AtomicI64::new(0),
            error: Mutex::new(String::new()),
            log: Mutex::new(LogState {
                last: None,
                unlogged: 0,
            }),
            metrics,
        }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    fn current(&self) -> Option<Arc<Store>> {
        self.slot.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Notes that the daemon is alive (cheap: rewrites the marker in place).
    pub fn mark_alive(&self, now_unix_ms: i64) {
        if let Some(s) = self.current() {
            s.mark_alive(now_unix_ms);
        }
    }

    /// Notes a clean stop, after the final flush succeeded.
    pub fn mark_clean(&self, now_unix_ms: i64) -> std::io::Result<()> {
        match self.current() {
            Some(s) => s.mark_clean(now_unix_ms),
            None => Err(std::io::Error::other("the store is closed")),
        }
    }

    /// Whether the store was (re)opened since the last call.
    pub fn take_opened(&self) -> bool {
        self.opened_late.swap(false, Ordering::SeqCst)
    }

    pub fn health(&self) -> Health {
        Health {
            failing_since_unix_ms: self.failing_since.load(Ordering::Relaxed),
            error: self.error.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        }
    }

    /// Runs `f` on the store, waiting at most `bound`.
    pub async fn run<T, F>(
        &self,
        what: &'static str,
        bound: Duration,
        f: F,
    ) -> Result<T, StorageError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        let dir = self.dir.display().to_string();
        if self.stalled.load(Ordering::SeqCst) {
            let e = StorageError::Stalled { dir };
            self.failed(what, &e);
            return Err(e);
        }
        let reopen = self.broken.load(Ordering::SeqCst);
        let slot = self.slot.clone();
        let path = self.dir.clone();
        let mut task = tokio::task::spawn_blocking(move || {
            if reopen {
                open_again(&slot, &path)?;
            }
            let store = slot
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone()
                .ok_or(StoreError::Damaged {
                    path: path.clone(),
                    what: "closed after a failure".into(),
                })?;
            f(&store)
        });
        let res = match tokio::time::timeout(bound, &mut task).await {
            Ok(Ok(res)) => res.map_err(StorageError::from),
            Ok(Err(e)) => Err(StorageError::Task {
                what,
                message: e.to_string(),
            }),
            Err(_) => {
                // The thread cannot be stopped: until it returns, nobody waits behind it.
                self.stalled.store(true, Ordering::SeqCst);
                let stalled = self.stalled.clone();
                tokio::spawn(async move {
                    let _ = task.await;
                    stalled.store(false, Ordering::SeqCst);
                    tracing::warn!("the stalled write to the state store in {dir} returned");
                });
                Err(StorageError::TimedOut { what, bound })
            }
        };
        match &res {
            Ok(_) => {
                if reopen {
                    tracing::info!("opened the state store in {} again", self.dir.display());
                    self.opened_late.store(true, Ordering::SeqCst);
                }
                self.broken.store(false, Ordering::SeqCst);
                self.succeeded();
            }
            Err(e) => {
                // sled refuses every write after an I/O error, and a panic inside it leaves it
                // in no known state: open it again before the next operation.
                if matches!(e, StorageError::Store(_) | StorageError::Task { .. }) {
                    self.broken.store(true, Ordering::SeqCst);
                }
                self.failed(what, e);
            }
        }
        res
    }

    fn succeeded(&self) {
        if self.failing_since.swap(0, Ordering::Relaxed) != 0 {
            let unlogged = std::mem::take(&mut self.log().unlogged);
            tracing::info!(
                "the state store in {} writes again ({unlogged} more failure(s) not logged)",
                self.dir.display()
            );
        }
        if let Some(m) = &self.metrics {
            m.store_write("", false);
        }
    }

    fn failed(&self, what: &'static str, e: &StorageError) {
        let now_ms = super::now().unix_ms;
        let _ =
            self.failing_since
                .compare_exchange(0, now_ms, Ordering::Relaxed, Ordering::Relaxed);
        *self.error.lock().unwrap_or_else(|p| p.into_inner()) = format!("{what}: {e}");
        if let Some(m) = &self.metrics {
            m.store_write(what, true);
        }
        let mut log = self.log();
        if log.last.is_some_and(|t| t.elapsed() < LOG_EVERY) {
            log.unlogged += 1;
            return;
        }
        let unlogged = std::mem::take(&mut log.unlogged);
        log.last = Some(Instant::now());
        drop(log);
        tracing::error!(
            "{what} failed: {e}{}; Acquire and Report go on, claims answer UNAVAILABLE until the \
             store writes again",
            if unlogged > 0 {
                format!(" ({unlogged} more failure(s) since the last line)")
            } else {
                String::new()
            }
        );
    }

    fn log(&self) -> std::sync::MutexGuard<'_, LogState> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Closes the store and opens it again (sled keeps failing after an I/O error until it is).
/// Gives up, leaving it closed, when others still use it or it cannot be opened in time.
fn open_again(slot: &Slot, dir: &Path) -> Result<(), StoreError> {
    let busy = |what: &str| StoreError::Damaged {
        path: dir.to_path_buf(),
        what: what.into(),
    };
    let deadline = Instant::now() + Duration::from_secs(1);
    let old = slot.write().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(old) = old {
        while Arc::strong_count(&old) > 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if Arc::strong_count(&old) > 1 {
            *slot.write().unwrap_or_else(|p| p.into_inner()) = Some(old);
            return Err(busy(
                "still in use by another operation; will open it again later",
            ));
        }
        drop(old);
    }
    loop {
        match Store::open(dir, super::now().unix_ms) {
            Ok((store, _)) => {
                *slot.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(store));
                return Ok(());
            }
            // sled's own flusher lets go of the file lock a moment after the old handle.
            Err(e) if e.is_locked() && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    }
}
