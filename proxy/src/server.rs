//! The proxy's listener: HTTP/1.1 (and HTTP/2 with prior knowledge) on a TCP address, each
//! connection served until it closes; on shutdown, no new connections, and those open get a
//! grace period to finish what they carry.

use crate::config::{check_listen, ProxyConfig, MAX_CONCURRENT_STREAMS};
use crate::connections::{Busy, Connections};
use crate::forward::Proxy;
use crate::limiter::Limiter;
use crate::upstream::{Clients, TlsError};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tokio::net::TcpListener;

/// How long open connections may finish after a shutdown began.
pub const GRACE: Duration = Duration::from_secs(10);

/// HTTP/2: what one stream, and one connection, may send before the proxy reads it.
pub const STREAM_WINDOW: u32 = 256 << 10;
pub const CONNECTION_WINDOW: u32 = 1 << 20;

#[derive(Debug, Error)]
pub enum ProxyError {
    #[error("listen: {0}")]
    Listen(String),
    #[error("cannot listen on {addr}: {source}; is another proxy running there? pick another with --listen")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// A proxy bound to its address, not serving yet.
pub struct Bound {
    listener: TcpListener,
    proxy: Arc<Proxy>,
    pub addr: SocketAddr,
}

/// Binds `config.listen` (checked again: loopback unless allow_remote) with the daemon on
/// `socket`.
pub async fn bind(config: ProxyConfig, socket: PathBuf) -> Result<Bound, ProxyError> {
    check_listen(config.listen, config.allow_remote).map_err(ProxyError::Listen)?;
    let clients = Clients::new(&config)?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ProxyError::Bind {
            addr: config.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ProxyError::Bind {
        addr: config.listen,
        source,
    })?;
    let proxy = Arc::new(Proxy::new(config, clients, Limiter::new(socket)));
    Ok(Bound {
        listener,
        proxy,
        addr,
    })
}

impl Bound {
    /// Serves until `shutdown` resolves, then lets open connections finish (up to [`GRACE`]).
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        // Every connection task holds a sender: when all are gone, every connection has closed.
        let (alive, mut all_closed) = tokio::sync::mpsc::channel::<()>(1);
        let (stopping, stop) = tokio::sync::watch::channel(false);
        let config = &self.proxy.config;
        let mut builder = auto::Builder::new(TokioExecutor::new());
        // Every bound a client could otherwise stretch, set on purpose: the time to send its
        // headers, their size and count, and HTTP/2's streams, header list and windows.
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(config.header_timeout)
            .max_buf_size(config.max_header_bytes.max(8192))
            .max_headers(config.max_headers);
        builder
            .http2()
            .timer(TokioTimer::new())
            .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
            .max_header_list_size(config.max_header_bytes as u32)
            // What a stream may send before it is read: a request waiting for room in the body
            // budget holds at most this much, outside the budget, per connection.
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .max_pending_accept_reset_streams(64)
            .keep_alive_interval(Some(Duration::from_secs(30)));
        let connections = Connections::new(config.max_connections, config.max_connections_per_uid);
        let (first_deadline, idle_deadline) = (config.header_timeout, config.idle_timeout);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    let (stream, peer) = match accepted {
                        Ok(x) => x,
                        Err(e) => {
                            // Out of descriptors and the like: wait a moment, keep serving.
                            tracing::warn!("llmctl proxy: accepting a connection failed: {e}");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let uid = stream.local_addr().ok().and_then(|local| crate::peer::uid(peer, local));
                    if uid.is_none() && peer.ip().to_canonical().is_loopback() {
                        self.proxy.warn_no_uid_once();
                    }
                    let slot = match connections.open(uid) {
                        Ok(slot) => slot,
                        Err(refused) => {
                            // At a bound, and every connection there is busy: this one is refused.
                            self.proxy.count_refusal(refused.reason());
                            drop(stream);
                            continue;
                        }
                    };
                    let proxy = self.proxy.clone();
                    let open = Counted::new(proxy.clone());
                    let activity = slot.activity.clone();
                    let service = service_fn(move |req| {
                        let proxy = proxy.clone();
                        let guard = Busy::enter(activity.clone());
                        async move {
                            let resp = proxy.handle(req).await;
                            Ok::<_, std::convert::Infallible>(guard.until_sent(resp))
                        }
                    });
                    let conn = builder.serve_connection(TokioIo::new(stream), service).into_owned();
                    let proxy_idle = self.proxy.clone();
                    let alive = alive.clone();
                    let mut stop = stop.clone();
                    tokio::spawn(async move {
                        tokio::pin!(conn);
                        let closing = tokio::select! {
                            ended = conn.as_mut() => {
                                if let Err(e) = ended {
                                    tracing::debug!("llmctl proxy: a connection ended: {e}");
                                }
                                None
                            }
                            // The oldest idle connection, closed for a new one at the bound.
                            () = slot.close.notified() => Some(("crowded", first_deadline)),
                            // No request on it for its deadline.
                            () = slot.activity.idle_for(first_deadline, idle_deadline) => Some(("idle", first_deadline)),
                            _ = stop.wait_for(|s| *s) => Some(("", GRACE)),
                        };
                        if let Some((why, within)) = closing {
                            if !why.is_empty() {
                                proxy_idle.count_closed(why);
                            }
                            // Closed as a server closes: HTTP/2 says so (GOAWAY), a request
                            // that was arriving is still answered.
                            conn.as_mut().graceful_shutdown();
                            let _ = tokio::time::timeout(within, conn).await;
                        }
                        drop((slot, open, alive));
                    });
                }
                () = &mut shutdown => break,
            }
        }
        drop(self.listener);
        let _ = stopping.send(true);
        drop(alive);
        if tokio::time::timeout(GRACE + Duration::from_secs(1), all_closed.recv())
            .await
            .is_err()
        {
            tracing::warn!("llmctl proxy: connections still open after {GRACE:?}; stopping anyway");
        }
    }
}

/// A proxy serving in the background until dropped (for `llmctl exec` and tests).
pub struct Running {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    pub async fn start(config: ProxyConfig, socket: PathBuf) -> Result<Running, ProxyError> {
        let bound = bind(config, socket).await?;
        let addr = bound.addr;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(bound.serve(async {
            let _ = stopped.await;
        }));
        Ok(Running {
            addr,
            stop: Some(stop),
            task,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting and waits for open connections (up to [`GRACE`]).
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.stop.is_some() {
            self.task.abort();
        }
    }
}

/// A connection counted open in the proxy's metrics until dropped.
struct Counted(Arc<Proxy>);

impl Counted {
    fn new(proxy: Arc<Proxy>) -> Counted {
        proxy
            .stats
            .connections
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Counted(proxy)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0
            .stats
            .connections
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}
