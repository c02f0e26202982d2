//! The proxy's side of the daemon: one gRPC channel on the daemon's socket, reconnected after
//! the daemon went away, and one session per client name, so the daemon shows the proxy's
//! traffic as its own clients and releases their slots if the proxy dies.

use crate::rules::fail_static::{phase, FailStatic, Phase};
use llmctl_client::pb::{self, limiter_client::LimiterClient, RefusalReason};
use llmctl_client::Session;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;
use tonic::transport::Channel;

/// Most client names with a session at once (the `x-llmctl-client` header is the caller's to
/// choose); past it, requests count on their upstream's client.
pub const MAX_CLIENTS: usize = 256;
/// After a failure to reach the daemon, requests skip it for this long, doubling up to
/// [`RETRY_MAX`], then try again.
const RETRY_MIN: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_millis(250);
/// How often the proxy warns while it forwards unlimited.
const WARN_EVERY: Duration = Duration::from_secs(60);
/// The longest a call other than a waiting Acquire may take before the daemon counts as away.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest connecting or opening a session may take (a daemon that accepts and hangs).
const SESSION_TIMEOUT: Duration = Duration::from_secs(1);

/// What an Acquire came to.
pub enum Grant {
    Granted(pb::AcquireResponse),
    Refused(pb::AcquireResponse),
    /// The daemon cannot be asked (not running, stopping, or not answering): why.
    Unreachable(String),
    /// The daemon answered with an error about the request (a bad key, its queue full).
    Error(tonic::Status),
}

#[derive(Default)]
struct Conn {
    client: Option<LimiterClient<Channel>>,
    sessions: HashMap<String, Session>,
    skip_until: Option<Instant>,
    backoff: Duration,
    warned: Option<Instant>,
    /// Whether the daemon ever answered, and since when it has not (None: it does).
    answered: bool,
    down_since: Option<Instant>,
}

pub struct Limiter {
    socket: PathBuf,
    conn: Mutex<Conn>,
    /// Held while connecting or opening a session.
    opening: Mutex<()>,
    /// What the proxy knows of each key, to limit with while the daemon is away.
    pub known: FailStatic,
}

impl Limiter {
    pub fn new(socket: PathBuf) -> Limiter {
        Limiter {
            socket,
            conn: Mutex::new(Conn::default()),
            opening: Mutex::new(()),
            known: FailStatic::default(),
        }
    }

    pub fn socket(&self) -> &std::path::Path {
        &self.socket
    }

    /// A client connected to the daemon with a session open for `client_id`, or why not.
    /// The state lock is never held across a call to the daemon: connecting and opening
    /// sessions take `opening` instead (one at a time, so a client id gets one session), and
    /// everything else (the phase, warnings) stays answerable while the daemon is slow.
    async fn client(&self, client_id: &str) -> Result<LimiterClient<Channel>, String> {
        {
            let c = self.conn.lock().await;
            if c.skip_until.is_some_and(|t| Instant::now() < t) {
                return Err("the daemon did not answer a moment ago".into());
            }
            if let Some(client) = &c.client {
                if c.sessions.get(client_id).is_some_and(Session::is_open) || !room(&c, client_id) {
                    return Ok(client.clone());
                }
            }
        }
        let _one = self.opening.lock().await;
        let existing = self.conn.lock().await.client.clone();
        let mut client = match existing {
            Some(client) => client,
            None => {
                match tokio::time::timeout(SESSION_TIMEOUT, llmctl_client::connect(&self.socket))
                    .await
                {
                    Ok(Ok(client)) => {
                        self.conn.lock().await.client = Some(client.clone());
                        client
                    }
                    Ok(Err(e)) => return Err(self.failed(e.to_string()).await),
                    Err(_) => return Err(self.failed("connecting timed out".into()).await),
                }
            }
        };
        let needs = {
            let c = self.conn.lock().await;
            !c.sessions.get(client_id).is_some_and(Session::is_open) && room(&c, client_id)
        };
        if needs {
            let session = tokio::time::timeout(
                SESSION_TIMEOUT,
                Session::open(&mut client, &self.socket, client_id),
            )
            .await;
            match session {
                Ok(Ok(s)) => {
                    self.conn
                        .lock()
                        .await
                        .sessions
                        .insert(client_id.to_string(), s);
                }
                Ok(Err(e)) => return Err(self.failed(e.to_string()).await),
                Err(_) => return Err(self.failed("opening a session timed out".into()).await),
            }
        }
        self.conn.lock().await.backoff = Duration::ZERO;
        Ok(client)
    }

    /// Whether `client_id` may have its own session (else its requests use the upstream's).
    pub async fn has_room_for(&self, client_id: &str) -> bool {
        room(&*self.conn.lock().await, client_id)
    }

    /// Notes the daemon away: drops the channel (the next call connects again) and skips it
    /// for a while. Sessions are kept: one whose stream really ended says so (`is_open`) and is
    /// opened again, while a call that merely failed (a slow report) must not end them, which
    /// would free the slots of every request still streaming.
    fn down(&self, c: &mut Conn, why: String) -> String {
        c.down_since.get_or_insert_with(Instant::now);
        c.client = None;
        c.backoff = (c.backoff * 2).clamp(RETRY_MIN, RETRY_MAX);
        c.skip_until = Some(Instant::now() + c.backoff);
        why
    }

    async fn failed(&self, why: String) -> String {
        let mut c = self.conn.lock().await;
        self.down(&mut c, why)
    }

    /// The phase of the daemon's absence (`conformance/fail_static.json`), and when it began.
    pub async fn outage(&self, fail_static_for: Duration) -> (Phase, Option<Instant>) {
        let c = self.conn.lock().await;
        match c.down_since {
            None => (Phase::Up, None),
            Some(t) => (phase(t.elapsed(), c.answered, fail_static_for), Some(t)),
        }
    }

    async fn answered(&self) {
        let mut c = self.conn.lock().await;
        c.answered = true;
        c.down_since = None;
    }

    /// True once a minute while the proxy forwards unlimited: the caller then warns.
    pub async fn should_warn(&self) -> bool {
        let mut c = self.conn.lock().await;
        let now = Instant::now();
        if c.warned.is_some_and(|t| now.duration_since(t) < WARN_EVERY) {
            return false;
        }
        c.warned = Some(now);
        true
    }

    /// Asks the daemon for a lease. Safe to drop: a caller that goes away while this waits
    /// withdraws the wait, and a grant that arrives as it leaves is given back
    /// (`llmctl_client::acquire_abandonable`).
    pub async fn acquire(&self, req: pb::AcquireRequest) -> Grant {
        let client = match self.client(&req.client_id).await {
            Ok(c) => c,
            Err(why) => return Grant::Unreachable(why),
        };
        let limit = Duration::from_millis(req.max_wait_ms.max(0) as u64) + CALL_TIMEOUT;
        match tokio::time::timeout(limit, llmctl_client::acquire_abandonable(&client, req)).await {
            Ok(Ok(r)) => {
                if r.reason_code != RefusalReason::Stopping as i32 {
                    self.answered().await;
                }
                if r.granted {
                    Grant::Granted(r)
                } else if r.reason_code == RefusalReason::Stopping as i32 {
                    Grant::Unreachable(
                        self.failed(format!("the daemon is stopping ({})", r.reason))
                            .await,
                    )
                } else {
                    Grant::Refused(r)
                }
            }
            Ok(Err(s)) if is_unreachable(&s) => {
                Grant::Unreachable(self.failed(s.message().to_string()).await)
            }
            Ok(Err(s)) => Grant::Error(s),
            Err(_) => Grant::Unreachable(self.failed("Acquire timed out".into()).await),
        }
    }

    /// Gives back a lease whose request was never sent (its caller went away first): every
    /// unit it took goes back. Nothing happens when the daemon cannot be asked (the lease then
    /// lapses at its estimate, its slot freed with the session).
    pub async fn withdraw(&self, client_id: &str, lease_id: String) {
        let Ok(mut client) = self.client(client_id).await else {
            return;
        };
        let req = pb::WithdrawRequest {
            acquire_id: String::new(),
            lease_id,
        };
        match tokio::time::timeout(CALL_TIMEOUT, client.withdraw(req)).await {
            Ok(Ok(_)) => self.answered().await,
            Ok(Err(s)) if is_unreachable(&s) => {
                self.failed(s.message().to_string()).await;
            }
            Ok(Err(s)) => tracing::warn!("llmctl proxy: a withdraw was refused: {}", s.message()),
            Err(_) => {
                self.failed("Withdraw timed out".into()).await;
            }
        }
    }

    /// Reports a lease; None when the daemon cannot be asked (the lease then lapses at its
    /// estimate).
    pub async fn report(
        &self,
        client_id: &str,
        req: pb::ReportRequest,
    ) -> Option<pb::ReportResponse> {
        let mut client = self.client(client_id).await.ok()?;
        match tokio::time::timeout(CALL_TIMEOUT, client.report(req)).await {
            Ok(Ok(r)) => {
                // The daemon answers: an outage, if one began, is over.
                self.answered().await;
                Some(r.into_inner())
            }
            Ok(Err(s)) => {
                if is_unreachable(&s) {
                    self.failed(s.message().to_string()).await;
                } else {
                    tracing::warn!("llmctl proxy: a report was refused: {}", s.message());
                }
                None
            }
            Err(_) => {
                self.failed("Report timed out".into()).await;
                None
            }
        }
    }
}

/// Whether `client_id` may have a session of its own: every upstream's own client may; names
/// callers choose (`x-llmctl-client`) while fewer than [`MAX_CLIENTS`] have one.
fn room(c: &Conn, client_id: &str) -> bool {
    client_id.starts_with("proxy:")
        || c.sessions.len() < MAX_CLIENTS
        || c.sessions.contains_key(client_id)
}

fn is_unreachable(s: &tonic::Status) -> bool {
    matches!(
        s.code(),
        tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled
    )
}
