//! Giving up without leaving anything behind: an Acquire whose caller stops waiting (its future
//! dropped, a timeout around it, a task cancelled) takes itself out of the daemon's queue, and a
//! grant that arrives as its caller leaves is given back at once, not held until its TTL.

use crate::pb::{self, limiter_client::LimiterClient};
use tokio::sync::oneshot;
use tonic::transport::Channel;

/// A fresh id for one Acquire (what Withdraw names).
pub fn new_acquire_id() -> String {
    format!("{:032x}", fastrand::u128(..))
}

/// `client.acquire(req)`, safe to drop at any point. The call runs in a task of its own: when
/// the returned future is dropped before the answer, the task withdraws the wait (Withdraw by
/// the request's `acquire_id`, given one here if empty), waits for the call's answer (at once,
/// once withdrawn), and gives back a grant it brings; a grant that arrives just as the future
/// is dropped is given back the same way.
pub async fn acquire_abandonable(
    client: &LimiterClient<Channel>,
    mut req: pb::AcquireRequest,
) -> Result<pb::AcquireResponse, tonic::Status> {
    if req.acquire_id.is_empty() {
        req.acquire_id = new_acquire_id();
    }
    let (mut tx, rx) = oneshot::channel::<Result<Unheard, tonic::Status>>();
    let mut control = client.clone();
    let mut caller = client.clone();
    tokio::spawn(async move {
        let acquire_id = req.acquire_id.clone();
        let call = caller.acquire(req);
        tokio::pin!(call);
        let answer = tokio::select! {
            answer = &mut call => answer,
            () = tx.closed() => {
                let _ = control
                    .withdraw(pb::WithdrawRequest { acquire_id, lease_id: String::new() })
                    .await;
                // Answered at once now; a grant it brings is dropped unheard: given back.
                let _ = call.await.map(|a| Unheard::new(&control, a.into_inner()));
                return;
            }
        };
        // An answer the caller does not take (it left as the answer came) is dropped unheard.
        let _ = tx.send(answer.map(|a| Unheard::new(&control, a.into_inner())));
    });
    match rx.await {
        Ok(answer) => answer.map(Unheard::heard),
        Err(_) => Err(tonic::Status::cancelled("the acquire's task ended")),
    }
}

/// An Acquire's answer on its way to the caller: a grant in it is given back (Withdraw, nothing
/// was sent) when it is dropped before the caller took it.
struct Unheard {
    client: LimiterClient<Channel>,
    answer: Option<pb::AcquireResponse>,
}

impl Unheard {
    fn new(client: &LimiterClient<Channel>, answer: pb::AcquireResponse) -> Unheard {
        Unheard {
            client: client.clone(),
            answer: Some(answer),
        }
    }

    fn heard(mut self) -> pb::AcquireResponse {
        self.answer.take().unwrap_or_default()
    }
}

impl Drop for Unheard {
    fn drop(&mut self) {
        let Some(answer) = self.answer.take().filter(|a| a.granted) else {
            return;
        };
        give_back(&self.client, answer.lease_id);
    }
}

/// Gives back, in the background, a lease whose request was never sent.
fn give_back(client: &LimiterClient<Channel>, lease_id: String) {
    let mut client = client.clone();
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(async move {
            let _ = client
                .withdraw(pb::WithdrawRequest {
                    acquire_id: String::new(),
                    lease_id,
                })
                .await;
        });
    }
}

/// A granted lease that is settled exactly once: by `report`, or when dropped unsettled, at
/// once (not at its TTL): given back whole while its request was not sent, else reported
/// cancelled (a request made: its concurrency slot freed, its tokens at the estimate, never
/// a refusal).
pub struct Lease {
    client: LimiterClient<Channel>,
    /// The daemon's grant.
    pub granted: pb::AcquireResponse,
    sent: bool,
    settled: bool,
}

impl Lease {
    pub fn id(&self) -> &str {
        &self.granted.lease_id
    }

    /// The request went to the provider: from now on a drop reports it cancelled.
    pub fn mark_sent(&mut self) {
        self.sent = true;
    }

    /// Settles the lease with what happened (`lease_id` is filled in).
    pub async fn report(
        mut self,
        mut req: pb::ReportRequest,
    ) -> Result<pb::ReportResponse, tonic::Status> {
        self.settled = true;
        req.lease_id = self.granted.lease_id.clone();
        self.client
            .report(req)
            .await
            .map(tonic::Response::into_inner)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let lease_id = std::mem::take(&mut self.granted.lease_id);
        if !self.sent {
            give_back(&self.client, lease_id);
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut client = self.client.clone();
        rt.spawn(async move {
            let _ = client
                .report(pb::ReportRequest {
                    lease_id,
                    error_type: llmctl_common::classify::CANCELLED.into(),
                    error_message: "the caller gave up on the request".into(),
                    ..Default::default()
                })
                .await;
        });
    }
}

/// `acquire_abandonable`, a grant held as a [`Lease`] (Ok) or the refusal (Err): nothing the
/// caller drops at any point is held past that point.
pub async fn acquire_lease(
    client: &LimiterClient<Channel>,
    req: pb::AcquireRequest,
) -> Result<Result<Lease, pb::AcquireResponse>, tonic::Status> {
    let answer = acquire_abandonable(client, req).await?;
    if !answer.granted {
        return Ok(Err(answer));
    }
    Ok(Ok(Lease {
        client: client.clone(),
        granted: answer,
        sent: false,
        settled: false,
    }))
}
