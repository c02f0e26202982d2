//! Connections, before gRPC sees them: at most `max` at once, each must send the HTTP/2 preface
//! within `PREFACE_TIMEOUT` or is closed, and an accept error (no file descriptors left) backs
//! off instead of spinning. Closing is logged at most once per `LOG_EVERY`, with counts.

use super::authority::AuthorityFix;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};
use tonic::transport::server::{Connected, UdsConnectInfo};

/// What every HTTP/2 client sends first.
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// How long a new connection may take to send it.
pub const PREFACE_TIMEOUT: Duration = Duration::from_secs(5);
const LOG_EVERY: Duration = Duration::from_secs(30);
/// File descriptors kept for everything but connections (the store, the metrics port, logs).
const RESERVED_FDS: u64 = 128;

/// Raises the soft limit on open files to the hard one, and returns how many connections fit.
pub fn raise_file_limit() -> usize {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    let hard = limit.maximum.unwrap_or(1 << 20).min(1 << 20);
    let soft = match limit.current {
        Some(soft) if soft >= hard => soft,
        _ => match setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(hard),
                maximum: limit.maximum,
            },
        ) {
            Ok(()) => hard,
            Err(e) => {
                tracing::warn!("cannot raise the open-file limit to {hard}: {e}");
                limit.current.unwrap_or(1024)
            }
        },
    };
    soft.saturating_sub(RESERVED_FDS).clamp(16, 65_536) as usize
}

/// A connection that sent the preface (replayed to gRPC first), holding its place in the bound.
/// What the client sends then goes through `AuthorityFix`, so that clients that name the socket
/// as the request's authority are served too.
pub struct Conn {
    stream: UnixStream,
    replayed: usize,
    info: UdsConnectInfo,
    fix: AuthorityFix,
    /// Rewritten bytes not yet read by the server, from `taken` on.
    ready: Vec<u8>,
    taken: usize,
    _permit: OwnedSemaphorePermit,
}

/// How much is read from the client at once while its header blocks are being rewritten.
const READ_CHUNK: usize = 16 * 1024;

impl Connected for Conn {
    type ConnectInfo = UdsConnectInfo;

    fn connect_info(&self) -> UdsConnectInfo {
        self.info.clone()
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.replayed < PREFACE.len() {
            let rest = &PREFACE[self.replayed..];
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            self.replayed += n;
            return Poll::Ready(Ok(()));
        }
        let this = &mut *self;
        loop {
            if this.taken < this.ready.len() {
                let rest = &this.ready[this.taken..];
                let n = rest.len().min(buf.remaining());
                buf.put_slice(&rest[..n]);
                this.taken += n;
                if this.taken == this.ready.len() {
                    this.ready.clear();
                    this.taken = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.fix.is_passthrough() {
                return Pin::new(&mut this.stream).poll_read(cx, buf);
            }
            let mut chunk = [0u8; READ_CHUNK];
            let mut read = ReadBuf::new(&mut chunk);
            std::task::ready!(Pin::new(&mut this.stream).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                this.fix.finish(&mut this.ready);
                if this.ready.is_empty() {
                    return Poll::Ready(Ok(()));
                }
            } else {
                this.fix.feed(read.filled(), &mut this.ready);
            }
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Counts what was closed, for one log line now and then.
#[derive(Default)]
struct Closed {
    over_limit: AtomicU64,
    silent: AtomicU64,
    not_http2: AtomicU64,
    accept_errors: AtomicU64,
    last_log: Mutex<Option<Instant>>,
}

impl Closed {
    fn maybe_log(&self, max: usize, last_error: Option<&io::Error>) {
        {
            let mut last = self.last_log.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|t| t.elapsed() < LOG_EVERY) {
                return;
            }
            *last = Some(Instant::now());
        }
        let take = |c: &AtomicU64| c.swap(0, Ordering::Relaxed);
        let (over, not_http2, silent, errors) = (
            take(&self.over_limit),
            take(&self.not_http2),
            take(&self.silent),
            take(&self.accept_errors),
        );
        tracing::warn!(
            "connections closed since the last line: {over} over the bound of {max}, {silent} \
             silent for {} s, {not_http2} not speaking HTTP/2; {errors} accept error(s){}",
            PREFACE_TIMEOUT.as_secs(),
            last_error
                .map(|e| format!(" (last: {e})"))
                .unwrap_or_default()
        );
    }
}

/// Reads up to the preface's 24 bytes: how many came before the peer closed (0 when it closed
/// at once, as a client probing whether the daemon answers does).
async fn read_preface(stream: &mut UnixStream, buf: &mut [u8; 24]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match stream.read(&mut buf[n..]).await? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Accepts connections until `stop`, handing each that sent the preface to `tx`.
pub fn accept(
    listener: UnixListener,
    max: usize,
    mut stop: watch::Receiver<bool>,
) -> mpsc::Receiver<io::Result<Conn>> {
    let (tx, rx) = mpsc::channel(64);
    let slots = Arc::new(Semaphore::new(max));
    let closed = Arc::new(Closed::default());
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a,
                _ = stop.wait_for(|s| *s) => return,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, most likely: wait for some to be closed.
                    closed.accept_errors.fetch_add(1, Ordering::Relaxed);
                    closed.maybe_log(max, Some(&e));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let Ok(permit) = slots.clone().try_acquire_owned() else {
                closed.over_limit.fetch_add(1, Ordering::Relaxed);
                closed.maybe_log(max, None);
                continue;
            };
            let (tx, closed) = (tx.clone(), closed.clone());
            tokio::spawn(async move {
                let mut stream = stream;
                let mut first = [0u8; 24];
                match tokio::time::timeout(PREFACE_TIMEOUT, read_preface(&mut stream, &mut first))
                    .await
                {
                    // Closed before a byte: a client asking whether the daemon answers.
                    Ok(Ok(0)) => {}
                    Ok(Ok(24)) if &first == PREFACE => {
                        let info = UdsConnectInfo {
                            peer_addr: stream.peer_addr().ok().map(Arc::new),
                            peer_cred: stream.peer_cred().ok(),
                        };
                        let _ = tx
                            .send(Ok(Conn {
                                stream,
                                replayed: 0,
                                info,
                                fix: AuthorityFix::default(),
                                ready: Vec::new(),
                                taken: 0,
                                _permit: permit,
                            }))
                            .await;
                    }
                    Ok(Ok(_)) => {
                        closed.not_http2.fetch_add(1, Ordering::Relaxed);
                        closed.maybe_log(max, None);
                    }
                    _ => {
                        closed.silent.fetch_add(1, Ordering::Relaxed);
                        closed.maybe_log(max, None);
                    }
                }
            });
        }
    });
    rx
}
