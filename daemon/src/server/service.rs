//! gRPC adapter: checks what the wire brings, hands it to the engine, and waits for answers.
//! Policy lives in the engine, not here.

use super::convert::*;
use super::session::SessionStream;
use super::waiting::Waiting;
use super::{now, Shared};
use crate::engine::{Acquired, Action};
use llmctl_proto::v1 as pb;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

pub struct LimiterService {
    shared: Arc<Shared>,
}

impl LimiterService {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        LimiterService { shared }
    }
}

#[tonic::async_trait]
impl pb::limiter_server::Limiter for LimiterService {
    async fn acquire(
        &self,
        request: Request<pb::AcquireRequest>,
    ) -> Result<Response<pb::AcquireResponse>, Status> {
        self.shared.called();
        let uid = super::peer::uid(&request);
        let pid = super::peer::pid(&request);
        let wire = request.into_inner();
        let name = acquire_name(&wire.acquire_id, uid)?;
        let req = acquire_request(wire, uid, pid)?;
        let max_wait = req.max_wait;
        let (tx, rx) = oneshot::channel();
        let t = now();
        let acquired = {
            let mut core = self.shared.core();
            if core.closing {
                return Err(stopping());
            }
            if let Some(name) = &name {
                if core.named.withdrawn_early(name, t.mono) {
                    return Ok(Response::new(withdrawn_before(&req.key)));
                }
            }
            let acquired = core.engine.acquire(&req, t);
            if let Ok(Acquired::Queued(wid)) = acquired {
                core.waiters.insert(wid, tx);
                if let Some(name) = &name {
                    core.named.waits(name.clone(), wid);
                }
            }
            // Even a refused call may have moved the queue: hand those answers out now.
            core.deliver(t);
            acquired.map_err(status_of)?
        };
        if let Some(m) = &self.shared.metrics {
            match &acquired {
                Acquired::Granted(g) => m.granted(g),
                Acquired::NotGranted(r) => m.not_granted(&r.key),
                Acquired::Queued(_) => {}
            }
        }
        let resp = match acquired {
            Acquired::Granted(g) => granted(g),
            Acquired::NotGranted(r) => refused(r),
            Acquired::Queued(wid) => {
                self.shared.driver.notify_one();
                let waiting = Waiting {
                    shared: self.shared.clone(),
                    wid,
                    rx,
                    done: false,
                    name,
                };
                waiting.wait(max_wait).await
            }
        };
        Ok(Response::new(resp))
    }

    async fn withdraw(
        &self,
        request: Request<pb::WithdrawRequest>,
    ) -> Result<Response<pb::WithdrawResponse>, Status> {
        self.shared.called();
        let uid = super::peer::uid(&request);
        let r = request.into_inner();
        let name = acquire_name(&r.acquire_id, uid)?;
        if name.is_none() && r.lease_id.is_empty() {
            return Err(Status::invalid_argument(
                "Withdraw names neither an acquire_id nor a lease_id; give the acquire_id of a waiting Acquire or the lease_id of a grant whose request was never sent",
            ));
        }
        let t = now();
        let withdrawn = {
            let mut core = self.shared.core();
            let mut withdrawn = false;
            if !r.lease_id.is_empty() {
                core.engine
                    .check_reporter(&r.lease_id, uid)
                    .map_err(status_of)?;
                withdrawn |= core.engine.abandon(&r.lease_id, t);
            }
            if let Some(name) = name {
                withdrawn |= core.withdraw_named(name, t);
            }
            core.deliver(t);
            withdrawn
        };
        self.shared.driver.notify_one();
        Ok(Response::new(pb::WithdrawResponse { withdrawn }))
    }

    async fn report(
        &self,
        request: Request<pb::ReportRequest>,
    ) -> Result<Response<pb::ReportResponse>, Status> {
        self.shared.called();
        let uid = super::peer::uid(&request);
        let t = now();
        let (lease_id, outcome) = outcome_of(request.into_inner(), t.unix_ms)?;
        let advice = {
            let mut core = self.shared.core();
            if let Err(e) = core.engine.check_reporter(&lease_id, uid) {
                let since_start = t.unix_ms.saturating_sub(self.shared.started_unix_ms);
                if matches!(e, crate::engine::EngineError::UnknownLease(_))
                    && since_start < super::startup::LOST_LEASES_WITHIN.as_millis() as i64
                {
                    // Granted by the daemon before this one: its clients called without one.
                    core.engine.note_fault(
                        None,
                        t.mono + super::startup::FAULT_AFTER_LOST_LEASE,
                        t,
                    );
                }
                return Err(status_of(e));
            }
            let (advice, info) = core
                .engine
                .report_with_info(&lease_id, &outcome, t)
                .map_err(status_of)?;
            if let Some(m) = &core.metrics {
                m.reported(&info, &advice);
            }
            core.deliver(t);
            advice
        };
        self.shared.driver.notify_one();
        if matches!(outcome.status, 429 | 529) || advice.action == Action::Retry {
            self.shared.persist.notify_one();
            // The other hosts hear of the cooldown now, not at the next tick.
            self.shared.fleet_wake.notify_one();
        }
        Ok(Response::new(advice_of(advice)))
    }

    async fn cooldown(
        &self,
        request: Request<pb::CooldownRequest>,
    ) -> Result<Response<pb::CooldownResponse>, Status> {
        let (key, duration, reason) = cooldown_request(request.into_inner())?;
        let t = now();
        let until = {
            let mut core = self.shared.core();
            let until = core
                .engine
                .cooldown(&key, duration, &reason, t)
                .map_err(status_of)?;
            core.deliver(t);
            until
        };
        self.shared.driver.notify_one();
        self.shared.persist.notify_one();
        self.shared.fleet_wake.notify_one();
        Ok(Response::new(pb::CooldownResponse {
            until_unix_ms: until,
        }))
    }

    async fn status(
        &self,
        request: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusResponse>, Status> {
        // Always fresh: a caller reads what it just did.
        let prefix = request.into_inner().key_prefix;
        let st = self.shared.status().await;
        Ok(Response::new(super::status::filtered(&st, &prefix)))
    }

    type WatchStream = ReceiverStream<Result<pb::StatusResponse, Status>>;

    async fn watch(
        &self,
        request: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let pid = super::peer::pid(&request);
        super::status::watch(&self.shared, pid, request.into_inner()).map(Response::new)
    }

    async fn claim(
        &self,
        request: Request<pb::ClaimRequest>,
    ) -> Result<Response<pb::ClaimResponse>, Status> {
        let uid = super::peer::uid(&request);
        super::claims::claim(&self.shared, request.into_inner(), uid)
            .await
            .map(Response::new)
    }

    async fn complete(
        &self,
        request: Request<pb::CompleteRequest>,
    ) -> Result<Response<pb::CompleteResponse>, Status> {
        self.shared.called();
        let uid = super::peer::uid(&request);
        super::claims::complete(&self.shared, request.into_inner(), uid)
            .await
            .map(Response::new)
    }

    async fn reset(
        &self,
        request: Request<pb::ResetRequest>,
    ) -> Result<Response<pb::ResetResponse>, Status> {
        let r = request.into_inner();
        let t = now();
        let summary = {
            let mut core = self.shared.core();
            let summary = core.engine.reset(&r.key, t).map_err(status_of)?;
            core.deliver(t);
            summary
        };
        tracing::info!("key {:?} reset: {summary:?}", r.key);
        self.shared.driver.notify_one();
        self.shared.persist.notify_one();
        Ok(Response::new(pb::ResetResponse {
            learned_limits: summary.learned_limits as i64,
            debt: summary.debt,
            cooldown_ended: summary.cooldown,
            breaker_closed: summary.breaker,
        }))
    }

    async fn set_run_budget(
        &self,
        request: Request<pb::SetRunBudgetRequest>,
    ) -> Result<Response<pb::SetRunBudgetResponse>, Status> {
        let r = request.into_inner();
        let budget = run_budget(&r)?;
        let t = now();
        self.shared
            .core()
            .engine
            .set_run_budget(&r.run_id, budget, t)
            .map_err(status_of)?;
        Ok(Response::new(pb::SetRunBudgetResponse {}))
    }

    async fn ping(
        &self,
        _request: Request<pb::PingRequest>,
    ) -> Result<Response<pb::PingResponse>, Status> {
        Ok(Response::new(pb::PingResponse {}))
    }

    type SessionStream = SessionStream;

    async fn session(
        &self,
        request: Request<pb::SessionRequest>,
    ) -> Result<Response<Self::SessionStream>, Status> {
        let uid = super::peer::uid(&request);
        let peer_pid = super::peer::pid(&request);
        let r = request.into_inner();
        let client_id = session_client(&r)?;
        {
            let mut core = self.shared.core();
            if core.closing {
                return Err(stopping());
            }
            let s = core.sessions.entry(client_id.clone()).or_default();
            s.count += 1;
            // The socket's word for the process beats what the client says.
            s.pid = peer_pid.or(u32::try_from(r.pid).ok().filter(|p| *p > 0));
            s.uid = uid;
        }
        let (tx, rx) = mpsc::channel(1);
        let _ = tx.try_send(Ok(pb::SessionEvent {
            client_id: client_id.clone(),
        }));
        let mut stop = self.shared.stopping.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = tx.closed() => {}
                _ = stop.wait_for(|s| *s) => {}
            }
        });
        Ok(Response::new(SessionStream {
            inner: ReceiverStream::new(rx),
            shared: self.shared.clone(),
            client_id,
        }))
    }
}
