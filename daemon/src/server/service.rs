//! gRPC adapter: checks what the wire brings, hands it to the engine, and waits for answers.
//! Policy lives in the engine, not here.

use super::convert::*;
use super::session::SessionStream;
use super::waiting::Waiting;
use super::{now, Shared};
use crate::engine::{self, Acquired, Action, Outcome, ProviderSignals};
use llmctl_proto::v1 as pb;
use std::sync::Arc;
use std::time::Duration;
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
        let r = request.into_inner();
        check_name("client_id", &r.client_id, "host-pid-random")?;
        check_name("route_group", r.route_group(), "chat")?;
        check_name("profile", r.profile(), "interactive")?;
        if r.max_wait_ms < 0 {
            return Err(Status::invalid_argument(format!(
                "max_wait_ms = {} is negative; give 0 to answer at once, or up to 3600000",
                r.max_wait_ms
            )));
        }
        let max_wait = Duration::from_millis(r.max_wait_ms as u64);
        let req = engine::AcquireRequest {
            key: r.key,
            requests: r.requests,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            priority: r.priority,
            max_wait,
            client_id: r.client_id,
            run_id: r.run_id,
            route_group: r.route_group.unwrap_or_default(),
            profile: r.profile.unwrap_or_default(),
            output_tokens_declared: r.output_tokens_declared,
            uid,
            pid,
        };
        let (tx, rx) = oneshot::channel();
        let t = now();
        let acquired = {
            let mut core = self.shared.core();
            if core.closing {
                return Err(stopping());
            }
            let acquired = core.engine.acquire(&req, t);
            if let Ok(Acquired::Queued(wid)) = acquired {
                core.waiters.insert(wid, tx);
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
                };
                waiting.wait(max_wait).await
            }
        };
        Ok(Response::new(resp))
    }

    async fn report(
        &self,
        request: Request<pb::ReportRequest>,
    ) -> Result<Response<pb::ReportResponse>, Status> {
        self.shared.called();
        let uid = super::peer::uid(&request);
        let mut r = request.into_inner();
        check_name("error_type", &r.error_type, "rate_limit_error")?;
        r.error_message =
            llmctl_proto::text::for_terminal(&truncated(r.error_message, MAX_ERROR_MESSAGE_BYTES));
        if r.headers.len() > MAX_HEADERS {
            return Err(Status::invalid_argument(format!(
                "{} headers sent; send at most {MAX_HEADERS} (the rate-limit and retry headers are enough)",
                r.headers.len()
            )));
        }
        if let Some((name, _)) = r
            .headers
            .iter()
            .find(|(n, v)| n.len() + v.len() > MAX_HEADER_BYTES)
        {
            return Err(Status::invalid_argument(format!(
                "header {:?} is over {MAX_HEADER_BYTES} bytes; send only the rate-limit and retry headers",
                name.chars().take(64).collect::<String>()
            )));
        }
        if !(r.status_code == 0 || (100..=999).contains(&r.status_code)) {
            return Err(Status::invalid_argument(format!(
                "status_code = {} is not an HTTP status; give 100..999, or 0 when no answer came",
                r.status_code
            )));
        }
        if r.attempt < 0 {
            return Err(Status::invalid_argument(format!(
                "attempt = {} is negative; the first attempt is 1",
                r.attempt
            )));
        }
        let t = now();
        let headers: Vec<(String, String)> = r
            .headers
            .iter()
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let outcome = Outcome {
            status: r.status_code as u16,
            input_tokens: units("input_tokens", r.input_tokens)?,
            cached_input_tokens: units("cached_input_tokens", r.cached_input_tokens)?,
            output_tokens: units("output_tokens", r.output_tokens)?,
            usage_known: r.usage_known,
            signals: ProviderSignals::parse(
                headers.iter().map(|(a, b)| (a.as_str(), b.as_str())),
                &r.error_message,
                t.unix_ms,
            ),
            headers: headers
                .into_iter()
                .filter(|(n, _)| crate::engine::is_limit_header(n))
                .collect(),
            error_type: r.error_type,
            error_message: r.error_message,
            stream_started: r.stream_started,
            attempt: r.attempt as u32,
            first_attempt_unix_ms: r.first_attempt_unix_ms,
        };
        if outcome.cached_input_tokens > outcome.input_tokens {
            return Err(Status::invalid_argument(format!(
                "cached_input_tokens = {} is more than input_tokens = {}; input_tokens counts all input, cached included",
                outcome.cached_input_tokens, outcome.input_tokens
            )));
        }
        let advice = {
            let mut core = self.shared.core();
            if let Err(e) = core.engine.check_reporter(&r.lease_id, uid) {
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
                .report_with_info(&r.lease_id, &outcome, t)
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
        Ok(Response::new(pb::ReportResponse {
            advice: match advice.action {
                Action::Done => pb::Advice::Done,
                Action::Retry => pb::Advice::Retry,
                Action::GiveUp => pb::Advice::GiveUp,
                Action::Fallback => pb::Advice::Fallback,
            } as i32,
            retry_after_ms: advice.retry_after.as_millis() as i64,
            fallback_key: advice.fallback_key,
            reason: advice.reason,
        }))
    }

    async fn cooldown(
        &self,
        request: Request<pb::CooldownRequest>,
    ) -> Result<Response<pb::CooldownResponse>, Status> {
        let mut r = request.into_inner();
        r.reason = llmctl_proto::text::for_terminal(&truncated(r.reason, MAX_REASON_BYTES));
        if r.duration_ms <= 0 {
            return Err(Status::invalid_argument(format!(
                "duration_ms = {} must be positive (up to 24 h)",
                r.duration_ms
            )));
        }
        let t = now();
        let until = {
            let mut core = self.shared.core();
            let until = core
                .engine
                .cooldown(
                    &r.key,
                    Duration::from_millis(r.duration_ms as u64),
                    &r.reason,
                    t,
                )
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
        let bound = |what: &str, v: i64| -> Result<Option<u64>, Status> {
            match v {
                0 => Ok(None),
                v if v < 0 => Err(Status::invalid_argument(format!(
                    "{what} = {v} is negative; give 0 for no bound or a positive number"
                ))),
                v => Ok(Some(v as u64)),
            }
        };
        let budget = engine::RunBudget {
            max_calls: bound("max_calls", r.max_calls)?,
            max_retries: bound("max_retries", r.max_retries)?,
            max_wall_time: bound("max_wall_time_ms", r.max_wall_time_ms)?
                .map(std::time::Duration::from_millis),
        };
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
        let client_id = r.client_id;
        check_name("client_id", &client_id, "host-pid-random")?;
        if client_id.is_empty() {
            return Err(Status::invalid_argument(
                "client_id is empty; a session needs one (e.g. host-pid-random)",
            ));
        }
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
