//! The daemon process: binds the socket, restores the engine from the store, serves gRPC, moves
//! the queue on time, snapshots state, and stops cleanly.

mod service;
pub mod socket;

use crate::config::Config;
use crate::engine::{Engine, Now, WaiterAnswer, WaiterId};
use crate::store::Store;
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use thiserror::Error;
use tokio::sync::{oneshot, watch, Notify};

pub use service::LimiterService;

#[derive(Debug, Error)]
pub enum DaemonError {
    #[error(transparent)]
    Socket(#[from] socket::SocketError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("config: {0}")]
    Config(#[from] crate::engine::EngineError),
    #[error("gRPC server failed: {0}")]
    Serve(#[from] tonic::transport::Error),
    #[error("cannot serve metrics on {addr}: {source}; pick another --metrics-addr")]
    Metrics {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
}

/// The wall clock and the monotonic clock, read together.
pub fn now() -> Now {
    Now {
        mono: Instant::now(),
        unix_ms: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0),
    }
}

/// The engine and the callers waiting on it, under one lock so no answer is lost between them.
pub(crate) struct Core {
    pub engine: Engine,
    pub waiters: HashMap<WaiterId, oneshot::Sender<WaiterAnswer>>,
    pub sessions: HashMap<String, usize>,
    pub closing: bool,
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
}

impl Core {
    /// Hands every answer the engine produced to its waiting caller. A grant whose caller has
    /// gone is abandoned, which may in turn free capacity for others.
    pub fn deliver(&mut self, now: Now) {
        loop {
            let answers = self.engine.drain_answers();
            if answers.is_empty() {
                return;
            }
            for (wid, answer) in answers {
                let Some(tx) = self.waiters.remove(&wid) else {
                    // Nobody is waiting for it any more: a grant goes back whole.
                    if let WaiterAnswer::Granted(g) = answer {
                        self.engine.abandon(&g.lease_id, now);
                    }
                    continue;
                };
                if let Some(m) = &self.metrics {
                    match &answer {
                        WaiterAnswer::Granted(g) => m.granted(g),
                        WaiterAnswer::NotGranted(r) => m.not_granted(&r.key),
                    }
                }
                if let Err(WaiterAnswer::Granted(g)) = tx.send(answer) {
                    self.engine.abandon(&g.lease_id, now);
                }
            }
        }
    }
}

pub(crate) struct Shared {
    core: Mutex<Core>,
    /// Wakes the queue driver when something may have changed its next deadline.
    pub driver: Notify,
    /// Wakes the snapshot writer at once (a cooldown changed).
    pub persist: Notify,
    pub started_unix_ms: i64,
    pub socket: String,
    pub stopping: watch::Receiver<bool>,
    pub store: Arc<Store>,
    /// Claims are decided one at a time, so two racing claimants cannot both win.
    pub claims: tokio::sync::Mutex<()>,
    pub duplicates_suppressed: std::sync::atomic::AtomicU64,
    /// The same as the core's, reachable without its lock.
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
}

impl Shared {
    pub fn core(&self) -> MutexGuard<'_, Core> {
        self.core
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Everything `llmctl daemon` needs to run.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    pub socket: PathBuf,
    pub data_dir: PathBuf,
    pub config: Config,
    /// Where Prometheus text is served; off when None.
    pub metrics_addr: Option<std::net::SocketAddr>,
}

/// Opens the store, or when it cannot be read, moves it aside (kept for inspection) and starts
/// a fresh one: buckets then start empty.
fn open_store(dir: &std::path::Path) -> Result<Store, DaemonError> {
    match Store::open(dir) {
        Ok(s) => Ok(s),
        Err(e) => {
            let aside = dir.with_extension(format!("unreadable-{}", now().unix_ms));
            tracing::error!(
                "{e}; moving it to {} and starting with empty buckets",
                aside.display()
            );
            std::fs::rename(dir, &aside).map_err(|source| crate::store::StoreError::Open {
                path: dir.to_path_buf(),
                source: sled::Error::Io(source),
            })?;
            Ok(Store::open(dir)?)
        }
    }
}

/// Runs the daemon until `shutdown` resolves, then answers waiters, drains, flushes and returns.
pub async fn run(
    opts: DaemonOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), DaemonError> {
    let (listener, bound) = socket::bind(&opts.socket, opts.config.daemon.socket_group.as_deref())?;
    std::fs::create_dir_all(&opts.data_dir).map_err(|source| crate::store::StoreError::Open {
        path: opts.data_dir.clone(),
        source: sled::Error::Io(source),
    })?;
    let store = Arc::new(open_store(&opts.data_dir)?);
    let start = now();
    let epoch = (start.unix_ms as u64 / 1000) ^ u64::from(std::process::id()) << 16;
    let mut engine = Engine::new(
        opts.config.engine_config(),
        opts.config.keys.clone(),
        start,
        epoch,
    )?;
    let loaded = store.load();
    for problem in &loaded.unreadable {
        tracing::warn!("unreadable saved state, that key starts empty: {problem}");
    }
    let empty = engine.restore(&loaded.keys, &loaded.cooldowns, start);
    if !empty.is_empty() {
        tracing::info!(
            "no saved levels for {} configured key(s) ({}): their buckets start empty and fill at their rates",
            empty.len(),
            empty.join(", ")
        );
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let metrics = opts
        .metrics_addr
        .map(|_| Arc::new(crate::metrics::Metrics::new()));
    let shared = Arc::new(Shared {
        core: Mutex::new(Core {
            engine,
            waiters: HashMap::new(),
            sessions: HashMap::new(),
            closing: false,
            metrics: metrics.clone(),
        }),
        driver: Notify::new(),
        persist: Notify::new(),
        started_unix_ms: start.unix_ms,
        socket: bound.path.display().to_string(),
        stopping: stop_rx.clone(),
        store: store.clone(),
        claims: tokio::sync::Mutex::new(()),
        duplicates_suppressed: std::sync::atomic::AtomicU64::new(0),
        metrics,
    });
    let driver = tokio::spawn(drive_queue(shared.clone(), stop_rx.clone()));
    let metrics_task = match opts.metrics_addr {
        Some(addr) => Some(serve_metrics(shared.clone(), addr, stop_rx.clone()).await?),
        None => None,
    };
    let interval = opts.config.daemon.snapshot_interval();
    let writer = tokio::spawn(write_snapshots(
        shared.clone(),
        store.clone(),
        interval,
        stop_rx.clone(),
    ));

    tracing::info!(
        "llmctl daemon serving on {} (data in {}, {} configured key(s))",
        bound.path.display(),
        opts.data_dir.display(),
        opts.config.keys.len()
    );
    let signal_shared = shared.clone();
    let signal = async move {
        shutdown.await;
        tracing::info!("stopping: answering waiters, draining calls, flushing state");
        let mut core = signal_shared.core();
        core.closing = true;
        let t = now();
        core.engine
            .cancel_all("the daemon is stopping; acquire again when it is back", t);
        core.deliver(t);
        drop(core);
        let _ = stop_tx.send(true);
    };
    let service = LimiterService::new(shared.clone());
    let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
    let (stopped_tx, stopped_rx) = oneshot::channel::<()>();
    let mut server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(llmctl_proto::LimiterServer::new(service))
            .serve_with_incoming_shutdown(incoming, async move {
                signal.await;
                let _ = stopped_tx.send(());
            }),
    );
    let served = tokio::select! {
        res = &mut server => Some(res),
        _ = stopped_rx => match tokio::time::timeout(Duration::from_secs(5), &mut server).await {
            Ok(res) => Some(res),
            Err(_) => {
                // In-flight calls had their grace period.
                tracing::warn!("calls still open after 5 s; stopping anyway");
                server.abort();
                None
            }
        },
    };
    let _ = driver.await;
    if let Some(t) = metrics_task {
        let _ = t.await;
    }
    let _ = writer.await;
    let t = now();
    let (keys, cooldowns) = {
        let mut core = shared.core();
        (
            core.engine.snapshot_all(t),
            core.engine.cooldowns_snapshot(t),
        )
    };
    store.save_keys(&keys)?;
    store.save_cooldowns(&cooldowns)?;
    store.flush()?;
    tracing::info!("state flushed to {}; stopped", store.path().display());
    drop(bound);
    match served {
        Some(Ok(Err(e))) => Err(DaemonError::Serve(e)),
        Some(Err(e)) if e.is_panic() => {
            tracing::error!("the gRPC server panicked: {e}");
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Serves `GET /metrics` until the daemon stops.
async fn serve_metrics(
    shared: Arc<Shared>,
    addr: std::net::SocketAddr,
    mut stop: watch::Receiver<bool>,
) -> Result<tokio::task::JoinHandle<()>, DaemonError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| DaemonError::Metrics { addr, source })?;
    tracing::info!("metrics on http://{addr}/metrics");
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let shared = shared.clone();
            async move {
                let t = now();
                let (depths, keys, metrics) = {
                    let mut core = shared.core();
                    (
                        core.engine.queue_depths(),
                        core.engine.status(t),
                        core.metrics.clone(),
                    )
                };
                let body = metrics.map_or_else(String::new, |m| m.render(&depths, &keys));
                (
                    [(
                        "content-type",
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )],
                    body,
                )
            }
        }),
    );
    Ok(tokio::spawn(async move {
        let served = axum::serve(listener, app).with_graceful_shutdown(async move {
            let _ = stop.wait_for(|s| *s).await;
        });
        if let Err(e) = served.await {
            tracing::error!("metrics server stopped: {e}");
        }
    }))
}

/// Moves the queue when time alone can change it: refill reaches a waiter, a cooldown ends, a
/// lease expires.
async fn drive_queue(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    loop {
        let next = {
            let mut core = shared.core();
            let t = now();
            core.engine.expire(t);
            core.engine.pump(t);
            core.deliver(t);
            core.engine.next_wakeup(t)
        };
        let cap = Instant::now() + Duration::from_secs(1);
        let at = next.map_or(cap, |n| n.min(cap));
        tokio::select! {
            _ = tokio::time::sleep_until(at.into()) => {}
            _ = shared.driver.notified() => {}
            _ = stop.changed() => return,
        }
    }
}

/// Writes changed levels every `interval` while they change, and cooldowns as soon as they do.
/// Never on the Acquire path: the engine only hands over what changed.
async fn write_snapshots(
    shared: Arc<Shared>,
    store: Arc<Store>,
    interval: Duration,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = shared.persist.notified() => {}
            _ = stop.changed() => return,
        }
        let (keys, cooldowns) = {
            let mut core = shared.core();
            let t = now();
            (core.engine.take_dirty(t), core.engine.take_cooldowns(t))
        };
        if keys.is_empty() && cooldowns.is_none() {
            continue;
        }
        let store = store.clone();
        let res = tokio::task::spawn_blocking(move || {
            store.save_keys(&keys)?;
            if let Some(c) = cooldowns {
                store.save_cooldowns(&c)?;
            }
            store.flush()
        })
        .await;
        match res {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!("{e}; will try again at the next snapshot"),
            Err(e) => tracing::error!("snapshot writer failed: {e}"),
        }
    }
}
