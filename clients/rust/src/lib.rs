//! Connecting to the llmctl daemon over its Unix socket, and keeping a client session open so
//! the daemon releases this process's concurrency slots when it exits.

use hyper_util::rt::TokioIo;
use llmctl_proto::v1::{limiter_client::LimiterClient, SessionRequest};
use std::path::{Path, PathBuf};
use thiserror::Error;
use tokio::net::UnixStream;
use tokio_stream::StreamExt;
use tonic::transport::{Channel, Endpoint};

pub use llmctl_proto::v1 as pb;

pub mod giving_up;
pub mod time;

pub use giving_up::{acquire_abandonable, acquire_lease, new_acquire_id, Lease};

#[derive(Debug, Error)]
pub enum ConnectError {
    #[error("no llmctl daemon is answering on {path} ({reason}); start one with `llmctl daemon`, or point --socket / LLMCTL_SOCKET at a running one")]
    NotRunning { path: PathBuf, reason: String },
    #[error("the llmctl daemon on {path} refused the session: {status}")]
    Session {
        path: PathBuf,
        status: tonic::Status,
    },
}

/// Connects to the daemon on `path`; fails at once when nothing answers there.
pub async fn connect(path: &Path) -> Result<LimiterClient<Channel>, ConnectError> {
    // A status of many keys is large: take whatever the daemon sends.
    Ok(LimiterClient::new(channel(path).await?)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES))
}

/// A gRPC channel to the daemon's socket, for any of the services it serves (the limiter,
/// grpc.health.v1, reflection).
pub async fn channel(path: &Path) -> Result<Channel, ConnectError> {
    let not_running = |reason: String| ConnectError::NotRunning {
        path: path.to_path_buf(),
        reason,
    };
    if !path.exists() {
        return Err(not_running("no socket file there".into()));
    }
    let socket = path.to_path_buf();
    // The URI is required by the API but unused: every connection goes to the socket.
    let channel = Endpoint::from_static("http://llmctl.invalid")
        .connect_with_connector(tower::service_fn(move |_| {
            let socket = socket.clone();
            async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(socket).await?)) }
        }))
        .await
        .map_err(|e| {
            let mut reason = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                reason = s.to_string();
                source = s.source();
            }
            not_running(reason)
        })?;
    Ok(channel)
}

/// The largest message a client takes (a status of tens of thousands of keys).
pub const MAX_MESSAGE_BYTES: usize = 512 << 20;

/// A session held open in the background for as long as this value (or the process) lives.
pub struct Session {
    pub client_id: String,
    task: tokio::task::JoinHandle<()>,
}

impl Session {
    /// Opens a session for `client_id` and waits for the daemon to acknowledge it.
    pub async fn open(
        client: &mut LimiterClient<Channel>,
        path: &Path,
        client_id: &str,
    ) -> Result<Session, ConnectError> {
        let refused = |status| ConnectError::Session {
            path: path.to_path_buf(),
            status,
        };
        let mut stream = client
            .session(SessionRequest {
                client_id: client_id.to_string(),
                pid: std::process::id() as i32,
            })
            .await
            .map_err(refused)?
            .into_inner();
        stream.next().await.transpose().map_err(refused)?;
        let task = tokio::spawn(async move { while let Some(Ok(_)) = stream.next().await {} });
        Ok(Session {
            client_id: client_id.to_string(),
            task,
        })
    }
}

impl Session {
    /// Whether the daemon still holds the session open (false once its stream ended, as when
    /// the daemon stopped).
    pub fn is_open(&self) -> bool {
        !self.task.is_finished()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A client id unique to this process: host, pid and start time.
pub fn process_client_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "host".into());
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{host}-{}-{:x}", std::process::id(), t & 0xffff_ffff)
}
