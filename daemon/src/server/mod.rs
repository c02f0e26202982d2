//! The daemon process: binds the socket, restores the engine from the store, serves gRPC, moves
//! the queue on time, snapshots state, and stops cleanly.

mod authority;
mod claims;
mod conn;
mod convert;
pub(crate) mod fleet;
pub mod fleet_scripts;
mod peer;
mod reload;
mod service;
mod session;
pub mod socket;
mod startup;
mod status;
mod storage;
mod waiting;
mod writer;

use crate::config::Config;
use crate::engine::{Engine, Now, WaiterAnswer, WaiterId};
use crate::store::{Loaded, Opened, StoreError};
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
    #[error(
        "stopped without flushing state to {dir} (the store failed or did not answer in time; \
         see the errors above): the next start takes every grant since the last snapshot as made"
    )]
    Unflushed { dir: PathBuf },
    #[error("cannot build gRPC reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    #[error("cannot serve health on {addr}: {source}; pick another --health-addr")]
    Health {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot serve metrics on {addr}: {source}; pick another --metrics-addr")]
    Metrics {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
}

/// How long in-flight calls, and then the final flush, may take when the daemon stops.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

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

/// A client's open sessions, and the process holding them.
#[derive(Clone, Debug, Default)]
pub(crate) struct SessionInfo {
    pub count: usize,
    pub pid: Option<u32>,
    pub uid: Option<u32>,
}

/// The engine and the callers waiting on it, under one lock so no answer is lost between them.
pub(crate) struct Core {
    pub engine: Engine,
    pub waiters: HashMap<WaiterId, oneshot::Sender<WaiterAnswer>>,
    /// Open sessions by client_id.
    pub sessions: HashMap<String, SessionInfo>,
    pub closing: bool,
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
    /// Waiting Acquire calls by the id their callers gave them, for Withdraw.
    pub named: waiting::Named,
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
    /// The store, every operation on it bounded in time.
    pub storage: storage::Storage,
    /// Claims are decided one at a time, so two racing claimants cannot both win.
    pub claims: tokio::sync::Mutex<()>,
    /// When the store was found to have lost records (0: it was not).
    pub claims_lost_at: std::sync::atomic::AtomicI64,
    pub claim_retention: Duration,
    pub max_claim_result: usize,
    pub duplicates_suppressed: std::sync::atomic::AtomicU64,
    /// The same as the core's, reachable without its lock.
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
    /// The last status built, shared by every Watch stream and Status call close in time.
    pub status_cache: tokio::sync::Mutex<Option<(Instant, Arc<llmctl_proto::v1::StatusResponse>)>>,
    /// Open Watch streams by process id (0: unknown).
    pub watches: Mutex<HashMap<u32, usize>>,
    /// Calls served since `--idle-exit` last looked.
    pub calls: std::sync::atomic::AtomicU64,
    /// Fleet mode: what status shows of it; None: this host alone.
    pub fleet: Option<Arc<fleet::FleetView>>,
    /// Wakes the fleet side at once (a cooldown to share).
    pub fleet_wake: Notify,
}

impl Shared {
    /// The loss of claim records, while claims from before it may still be asked about.
    pub fn claims_lost_at_in_force(&self, now_unix_ms: i64) -> Option<i64> {
        let at = self
            .claims_lost_at
            .load(std::sync::atomic::Ordering::Relaxed);
        (at > 0 && now_unix_ms < at.saturating_add(self.claim_retention.as_millis() as i64))
            .then_some(at)
    }

    pub fn core(&self) -> MutexGuard<'_, Core> {
        self.core
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Reads the config again (SIGHUP): the file, then the flags, checked as at start.
#[derive(Clone)]
pub struct Reload(pub Arc<dyn Fn() -> Result<Config, String> + Send + Sync>);

impl std::fmt::Debug for Reload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reload")
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
    /// How to read the config again on SIGHUP; None: SIGHUP is ignored (logged).
    pub reload: Option<Reload>,
    /// Stop cleanly after this long with no session, lease, waiter or Watch (`--idle-exit`).
    pub idle_exit: Option<Duration>,
}

impl Shared {
    /// A call came (for `--idle-exit`).
    pub(crate) fn called(&self) {
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Resolves once the daemon has had nothing to do for `idle` (never when None): no session
/// open, no lease held, nobody waiting, no Watch stream.
async fn idle_for(shared: Arc<Shared>, idle: Option<Duration>) {
    let Some(idle) = idle else {
        return std::future::pending().await;
    };
    let every = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
    let mut since = tokio::time::Instant::now();
    loop {
        tokio::time::sleep(every).await;
        // A call since the last look (a client without a Session making short calls) counts.
        let called = shared.calls.swap(0, std::sync::atomic::Ordering::Relaxed) > 0;
        let busy = called
            || {
                let core = shared.core();
                !core.sessions.is_empty()
                    || core.engine.lease_count() > 0
                    || core.engine.waiting() > 0
            }
            || !shared
                .watches
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_empty();
        let t = tokio::time::Instant::now();
        if busy {
            since = t;
        } else if t.duration_since(since) >= idle {
            return;
        }
    }
}

/// Runs the daemon until `shutdown` resolves, then answers waiters, drains, flushes and returns:
/// `start` (socket, data folder, store, engine, fleet), `services` (health, reflection),
/// `spawn_tasks` (everything beside the server), `serve` (until the stop and its grace), `stop`
/// (tasks ended, state flushed).
pub async fn run(
    opts: DaemonOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), DaemonError> {
    let (mut started, listener) = start(&opts).await?;
    let services = services()?;
    let tasks = spawn_tasks(&mut started, &opts, &services.health).await?;
    tracing::info!(
        "llmctl daemon serving on {} (data in {}, {} configured key(s))",
        started.bound.path.display(),
        opts.data_dir.display(),
        opts.config.keys.len()
    );
    let served = serve(&started, listener, &opts, shutdown, services).await;
    stop(started, tasks, served).await
}

/// What the start made: the socket (removed when dropped), the data folder's lock, the state
/// every call shares, and the stop signal.
struct Started {
    bound: socket::SocketGuard,
    data_lock: crate::store::datadir::DataDirLock,
    shared: Arc<Shared>,
    /// Until its task takes it.
    fleet: Option<fleet::Fleet>,
    stop_tx: watch::Sender<bool>,
    stop_rx: watch::Receiver<bool>,
}

/// The services served beside the limiter: health (and its reporter) and reflection (v1 and
/// v1alpha), made before anything starts.
struct Services<H, V1, V1a> {
    health: tonic_health::server::HealthReporter,
    health_service: tonic_health::pb::health_server::HealthServer<H>,
    reflection_v1: tonic_reflection::server::v1::ServerReflectionServer<V1>,
    reflection_v1alpha: tonic_reflection::server::v1alpha::ServerReflectionServer<V1a>,
}

/// Health (SERVING once the tasks run) and server reflection (v1 and v1alpha: grpcurl and buf
/// curl see the service without a schema).
fn services() -> Result<
    Services<
        impl tonic_health::pb::health_server::Health,
        impl tonic_reflection::server::v1::ServerReflection,
        impl tonic_reflection::server::v1alpha::ServerReflection,
    >,
    DaemonError,
> {
    let (health, health_service) = tonic_health::server::health_reporter();
    let described = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(llmctl_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    Ok(Services {
        health,
        health_service,
        reflection_v1: described().build_v1()?,
        reflection_v1alpha: described().build_v1alpha()?,
    })
}

/// The tasks that run beside the server until the stop.
struct Tasks {
    driver: tokio::task::JoinHandle<()>,
    fleet: Option<(tokio::task::JoinHandle<()>, tokio::task::JoinHandle<()>)>,
    metrics: Option<tokio::task::JoinHandle<()>>,
    health: Option<tokio::task::JoinHandle<()>>,
    hangups: tokio::task::JoinHandle<()>,
    /// Its last flush waits for `drained`: a Report in the grace may still set a cooldown.
    writer: tokio::task::JoinHandle<bool>,
    drained: watch::Sender<bool>,
}

/// Binds the socket, locks the data folder, opens (and if need be recovers) the store, builds
/// the engine from the config and restores what was saved, and joins the fleet. The socket's
/// listener comes with it, for `serve`.
async fn start(opts: &DaemonOptions) -> Result<(Started, tokio::net::UnixListener), DaemonError> {
    // Everything the daemon creates is its user's alone (the socket is opened to a group below).
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    let (listener, bound) = socket::bind(&opts.socket, opts.config.daemon.socket_group.as_deref())?;
    let data_lock = crate::store::datadir::lock(&opts.data_dir).map_err(StoreError::from)?;
    let start = now();
    let interval = opts.config.daemon.snapshot_interval();
    let (store, opened, loaded) = match startup::open_store(&opts.data_dir, start.unix_ms)? {
        Some(mut found) => {
            startup::recover(&mut found, start, interval, &opts.data_dir);
            (Some(found.store), found.opened, found.loaded)
        }
        None => (None, Opened::default(), Loaded::default()),
    };
    let epoch = (start.unix_ms as u64 / 1000) ^ u64::from(std::process::id()) << 16;
    let mut engine = Engine::new(
        opts.config.engine_config(),
        opts.config.keys.clone(),
        start,
        epoch,
    )?;
    engine.set_lease_secret(startup::lease_secret());
    let empty = engine.restore(&loaded.keys, &loaded.cooldowns, start);
    if !empty.is_empty() {
        tracing::info!(
            "no saved levels for {} configured key(s) ({}): their buckets start empty and fill at their rates",
            empty.len(),
            empty.join(", ")
        );
    }
    let fleet = match &opts.config.fleet {
        Some(settings) => {
            let f = fleet::Fleet::start(settings, &opts.data_dir).await;
            engine.set_fleet_default(Some(f.starting_part()), now());
            Some(f)
        }
        None => None,
    };
    let (stop_tx, stop_rx) = watch::channel(false);
    let metrics = opts.metrics_addr.map(|_| {
        let m = crate::metrics::Metrics::new();
        Arc::new(if fleet.is_some() { m.with_fleet() } else { m })
    });
    let shared = Arc::new(Shared {
        core: Mutex::new(Core {
            engine,
            waiters: HashMap::new(),
            sessions: HashMap::new(),
            closing: false,
            metrics: metrics.clone(),
            named: waiting::Named::default(),
        }),
        driver: Notify::new(),
        persist: Notify::new(),
        started_unix_ms: start.unix_ms,
        socket: bound.path.display().to_string(),
        stopping: stop_rx.clone(),
        storage: storage::Storage::new(store, &opts.data_dir, metrics.clone()),
        claims: tokio::sync::Mutex::new(()),
        claims_lost_at: std::sync::atomic::AtomicI64::new(opened.lost_at_unix_ms.unwrap_or(0)),
        claim_retention: opts.config.daemon.claim_retention(),
        max_claim_result: opts.config.daemon.max_claim_result(),
        status_cache: tokio::sync::Mutex::new(None),
        watches: Mutex::new(HashMap::new()),
        calls: std::sync::atomic::AtomicU64::new(0),
        duplicates_suppressed: std::sync::atomic::AtomicU64::new(0),
        metrics,
        fleet: fleet.as_ref().map(|f| f.view.clone()),
        fleet_wake: Notify::new(),
    });
    let started = Started {
        bound,
        data_lock,
        shared,
        fleet,
        stop_tx,
        stop_rx,
    };
    Ok((started, listener))
}

/// Starts everything that runs beside the server: the queue's driver, the fleet and its claim
/// history, the metrics and health listeners, reloads on SIGHUP and the snapshot writer.
async fn spawn_tasks(
    started: &mut Started,
    opts: &DaemonOptions,
    health: &tonic_health::server::HealthReporter,
) -> Result<Tasks, DaemonError> {
    let (shared, stop_rx) = (&started.shared, &started.stop_rx);
    let driver = tokio::spawn(drive_queue(shared.clone(), stop_rx.clone()));
    let fleet = started.fleet.take().map(|f| {
        let history = tokio::spawn(claims::watch_history(shared.clone(), stop_rx.clone()));
        (
            tokio::spawn(fleet::run(shared.clone(), f, stop_rx.clone())),
            history,
        )
    });
    let metrics = match opts.metrics_addr {
        Some(addr) => Some(serve_metrics(shared.clone(), addr, stop_rx.clone()).await?),
        None => None,
    };
    // grpc.health.v1: SERVING for "" and llmctl.v1.Limiter until the daemon stops.
    health
        .set_serving::<llmctl_proto::LimiterServer<LimiterService>>()
        .await;
    let health_task = match opts.config.daemon.health_addr {
        Some(addr) => Some(serve_health(health.clone(), addr, stop_rx.clone()).await?),
        None => None,
    };
    health
        .set_service_status("", tonic_health::ServingStatus::Serving)
        .await;
    let hangups = tokio::spawn(reload::reload_on_hangup(
        shared.clone(),
        opts.reload.clone(),
        opts.config.clone(),
        stop_rx.clone(),
    ));
    let (drained, drained_rx) = watch::channel(false);
    let writer = tokio::spawn(writer::write_snapshots(
        shared.clone(),
        opts.config.daemon.snapshot_interval(),
        SHUTDOWN_GRACE,
        drained_rx,
    ));
    Ok(Tasks {
        driver,
        fleet,
        metrics,
        health: health_task,
        hangups,
        writer,
        drained,
    })
}

/// Serves gRPC (the limiter, health and reflection) on the socket until `shutdown` resolves or
/// the daemon is idle long enough; then says NOT_SERVING, answers every waiter and gives the
/// calls still open `SHUTDOWN_GRACE`. The server's result; None when it was stopped past the
/// grace.
async fn serve<H, V1, V1a>(
    started: &Started,
    listener: tokio::net::UnixListener,
    opts: &DaemonOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
    services: Services<H, V1, V1a>,
) -> Served
where
    H: tonic_health::pb::health_server::Health,
    V1: tonic_reflection::server::v1::ServerReflection,
    V1a: tonic_reflection::server::v1alpha::ServerReflection,
{
    let Services {
        health,
        health_service,
        reflection_v1,
        reflection_v1alpha,
    } = services;
    let signal_shared = started.shared.clone();
    let idle = idle_for(started.shared.clone(), opts.idle_exit);
    let idle_exit = opts.idle_exit;
    let stop_tx = started.stop_tx.clone();
    let signal = async move {
        tokio::select! {
            _ = shutdown => {}
            _ = idle => tracing::info!(
                "idle for {:.0?} (no session, lease, waiter or Watch): stopping (--idle-exit)",
                idle_exit.unwrap_or_default()
            ),
        }
        tracing::info!("stopping: answering waiters, draining calls, flushing state");
        health
            .set_not_serving::<llmctl_proto::LimiterServer<LimiterService>>()
            .await;
        health
            .set_service_status("", tonic_health::ServingStatus::NotServing)
            .await;
        {
            let mut core = signal_shared.core();
            core.closing = true;
            let t = now();
            core.engine
                .cancel_all("the daemon is stopping; acquire again when it is back", t);
            core.deliver(t);
        }
        let _ = stop_tx.send(true);
    };
    let service = LimiterService::new(started.shared.clone());
    let max_connections = conn::raise_file_limit();
    let incoming = tokio_stream::wrappers::ReceiverStream::new(conn::accept(
        listener,
        max_connections,
        started.stop_rx.clone(),
    ));
    let (stopped_tx, stopped_rx) = oneshot::channel::<()>();
    let mut server = tokio::spawn(
        tonic::transport::Server::builder()
            // A peer that stops answering pings is gone: its connection is closed.
            .http2_keepalive_interval(Some(Duration::from_secs(30)))
            .http2_keepalive_timeout(Some(Duration::from_secs(10)))
            .add_service(llmctl_proto::LimiterServer::new(service))
            .add_service(health_service)
            .add_service(reflection_v1)
            .add_service(reflection_v1alpha)
            .serve_with_incoming_shutdown(incoming, async move {
                signal.await;
                let _ = stopped_tx.send(());
            }),
    );
    tokio::select! {
        res = &mut server => Some(res),
        _ = stopped_rx => match tokio::time::timeout(SHUTDOWN_GRACE, &mut server).await {
            Ok(res) => Some(res),
            Err(_) => {
                // In-flight calls had their grace period.
                tracing::warn!("calls still open after 5 s; stopping anyway");
                server.abort();
                None
            }
        },
    }
}

/// What the server came to: its result, None when it was stopped past the grace.
type Served = Option<Result<Result<(), tonic::transport::Error>, tokio::task::JoinError>>;

/// Waits for the tasks, flushes the state and marks the stop clean; the socket goes and the
/// data folder's lock is let go.
async fn stop(started: Started, tasks: Tasks, served: Served) -> Result<(), DaemonError> {
    let Started {
        bound,
        data_lock,
        shared,
        fleet: _,
        stop_tx,
        stop_rx: _,
    } = started;
    // Sent already when the stop began; a server that ended on its own stops the tasks here.
    let _ = stop_tx.send(true);
    drop(stop_tx);
    let _ = tasks.drained.send(true);
    let _ = tasks.driver.await;
    if let Some((t, history)) = tasks.fleet {
        let _ = t.await;
        let _ = history.await;
    }
    let _ = tasks.hangups.await;
    if let Some(t) = tasks.health {
        let _ = t.await;
    }
    if let Some(t) = tasks.metrics {
        let _ = t.await;
    }
    let flushed = tasks.writer.await.unwrap_or(false);
    drop(bound);
    if !flushed {
        drop(data_lock);
        return Err(DaemonError::Unflushed {
            dir: shared.storage.path().to_path_buf(),
        });
    }
    let dir = shared.storage.path().display();
    if let Err(e) = shared.storage.mark_clean(now().unix_ms) {
        tracing::warn!("cannot mark the stop as clean in {dir}: {e}");
    }
    tracing::info!("state flushed to {dir}; stopped");
    drop(data_lock);
    match served {
        Some(Ok(Err(e))) => Err(DaemonError::Serve(e)),
        Some(Err(e)) if e.is_panic() => {
            tracing::error!("the gRPC server panicked: {e}");
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Serves grpc.health.v1 alone on a TCP address until the daemon stops, with the statuses
/// `reporter` sets.
async fn serve_health(
    reporter: tonic_health::server::HealthReporter,
    addr: std::net::SocketAddr,
    mut stop: watch::Receiver<bool>,
) -> Result<tokio::task::JoinHandle<()>, DaemonError> {
    let service = tonic_health::pb::health_server::HealthServer::new(
        tonic_health::server::HealthService::from_health_reporter(reporter),
    );
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| DaemonError::Health { addr, source })?;
    tracing::info!("gRPC health on {addr}");
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    Ok(tokio::spawn(async move {
        let served = tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, async move {
                let _ = stop.wait_for(|s| *s).await;
            });
        if let Err(e) = served.await {
            tracing::error!("health server stopped: {e}");
        }
    }))
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
                let fleet = shared.fleet.as_ref().map(|f| crate::metrics::FleetGauges {
                    connected: f.is_connected(),
                    hosts: f.hosts(),
                    slice: f.slice,
                });
                let body = metrics.map_or_else(String::new, |m| m.render(&depths, &keys, fleet));
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
