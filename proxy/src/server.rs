//! The proxy's listener: HTTP/1.1 (and HTTP/2 with prior knowledge) on a TCP address, each
//! connection served until it closes; on shutdown, no new connections, and those open get a
//! grace period to finish what they carry.

use crate::config::{check_listen, ProxyConfig};
use crate::forward::Proxy;
use crate::limiter::Limiter;
use crate::upstream::{Clients, TlsError};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tokio::net::TcpListener;

/// How long open connections may finish after a shutdown began.
pub const GRACE: Duration = Duration::from_secs(10);

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
        let graceful = GracefulShutdown::new();
        let builder = auto::Builder::new(TokioExecutor::new());
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    let (stream, _) = match accepted {
                        Ok(x) => x,
                        Err(e) => {
                            // Out of descriptors and the like: wait a moment, keep serving.
                            tracing::warn!("llmctl proxy: accepting a connection failed: {e}");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let proxy = self.proxy.clone();
                    let service = service_fn(move |req| {
                        let proxy = proxy.clone();
                        async move { Ok::<_, std::convert::Infallible>(proxy.handle(req).await) }
                    });
                    let conn = builder.serve_connection(TokioIo::new(stream), service).into_owned();
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!("llmctl proxy: a connection ended: {e}");
                        }
                    });
                }
                () = &mut shutdown => break,
            }
        }
        drop(self.listener);
        if tokio::time::timeout(GRACE, graceful.shutdown())
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
