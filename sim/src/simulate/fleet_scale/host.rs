//! A virtual host of the fleet-scale scenario: its engine, its parts, its requests, and a
//! renewal's answer applied as the daemon applies it.

use super::*;

/// One host's side of one key.
#[derive(Default)]
pub(super) struct Part {
    pub(super) held: Option<Held>,
    /// Waiting in the engine: since when.
    pub(super) waiting: HashMap<WaiterId, Instant>,
    /// Granted and not yet answered: the lease, when its answer comes, and whether the
    /// provider took it.
    pub(super) in_flight: VecDeque<(String, Instant, bool)>,
    /// Requests the provider refused, to be asked for again.
    pub(super) retries: usize,
    /// A renewal (or a take from the line) on its way.
    pub(super) renewing: bool,
    /// The key's line was tried at first sight.
    pub(super) line_tried: bool,
}

/// A virtual host: its engine and its parts.
pub(super) struct Host {
    pub(super) name: String,
    pub(super) engine: Engine,
    pub(super) parts: Vec<Part>,
    /// Its demand is on (off: it left, or is idle for now).
    pub(super) busy: bool,
    /// It left the fleet: its parts went back and it does nothing more.
    pub(super) gone: bool,
    /// Poisson arrivals a second per key (one-hot's light hosts); 0: a backlog instead.
    pub(super) arrivals_per_s: f64,
    pub(super) backlog: usize,
    pub(super) next_arrival: Instant,
    /// Something reached its engine since its queue was last served (a call, an answer, a
    /// renewal, a cooldown): it is served at this step. Otherwise it is served when
    /// `wake` comes, as a daemon sleeps until its engine's next wakeup.
    pub(super) stirred: bool,
    pub(super) wake: Option<Instant>,
}

impl Host {
    pub(super) fn new(name: String, spec: &FleetScaleSpec, t: Now) -> Result<Host, String> {
        let keys = (0..spec.keys)
            .map(|k| {
                (
                    key_name(k),
                    KeyLimits {
                        rates: vec![Rate {
                            dimension: llmctl_daemon::engine::Dimension::Requests,
                            period: Period::Minute,
                            limit: spec.limit_per_s * 60.0,
                            capacity: spec.burst,
                        }],
                        ..KeyLimits::default()
                    },
                )
            })
            .collect();
        let mut engine = Engine::new(EngineConfig::default(), keys, t, fastrand::u64(..))
            .map_err(|e| format!("cannot make a host's engine: {e}"))?;
        // As a daemon connected to Redis starts: no part until its first renewal.
        engine.set_fleet_default(
            Some(FleetPart {
                share: 0.0,
                floor: 0.5,
                slots: Some(0),
                line: false,
            }),
            t,
        );
        Ok(Host {
            name,
            engine,
            parts: (0..spec.keys).map(|_| Part::default()).collect(),
            busy: true,
            gone: false,
            arrivals_per_s: 0.0,
            backlog: spec.backlog,
            next_arrival: t.mono,
            stirred: true,
            wake: None,
        })
    }
}

/// A renewal, answered: what it sent, when, and the answer.
pub(super) struct Renewal {
    pub(super) host: usize,
    pub(super) key: usize,
    pub(super) want: FleetWant,
    pub(super) fill: [f64; 4],
    pub(super) give_back: bool,
    pub(super) sent: Instant,
    /// None: Redis did not answer (tried again at the next step).
    pub(super) answer: Option<PartAnswer>,
}

/// Units taken from a key's line, answered: what was asked, and the answer with when it came.
pub(super) struct LineTake {
    pub(super) host: usize,
    pub(super) want: FleetWant,
    pub(super) ask: LineAsk,
    /// None: Redis did not answer (asked again at the next step).
    pub(super) answer: Option<(LineAnswer, Instant)>,
    pub(super) key: usize,
}

/// A line's answer, applied as the daemon applies it.
pub(super) fn apply_units(host: &mut Host, r: &LineTake, n: Now) {
    let part = &mut host.parts[r.key];
    part.renewing = false;
    let Some((a, received)) = r.answer.as_ref().filter(|_| !host.gone) else {
        return;
    };
    host.stirred = true;
    apply_line(&mut host.engine, &r.want, &r.ask, a, *received, n);
    if !a.on {
        // Back to parts: renewed at the next step.
        part.held = None;
    }
}

/// A renewal's answer, applied as the daemon applies it.
pub(super) fn apply(host: &mut Host, r: &Renewal, slice: Duration, n: Now) {
    let part = &mut host.parts[r.key];
    part.renewing = false;
    let (w, give_back) = (&r.want, r.give_back);
    let Some(a) = r.answer.as_ref().filter(|_| !host.gone) else {
        // Left meanwhile, or Redis did not answer: tried again at the next step.
        return;
    };
    host.stirred = true;
    let idle_since = part.held.as_ref().and_then(|p| p.idle_since);
    part.held = Some(Held::renewed(r.sent, slice, w, a, idle_since, give_back));
    let (fleet_part, exchange) = answered_part(w, r.fill, a, give_back);
    host.engine
        .exchange_fleet_part(&w.key, fleet_part, Some(exchange), n);
    if a.fault {
        host.engine
            .note_fault(Some(&w.key), n.mono + slice * LEASE_SLICES, n);
    }
    if !a.cooldown.is_zero() {
        let until = n.unix_ms.saturating_add(a.cooldown.as_millis() as i64);
        let _ = host
            .engine
            .apply_shared_cooldown(&w.key, until, &a.cooldown_reason, n);
    }
}

/// One host's requests at `t`: answers that came report, new demand asks, and what its engine
/// grants goes to the provider.
pub(super) fn serve(
    host: &mut Host,
    spec: &FleetScaleSpec,
    t: Instant,
    n: Now,
    rng: &mut fastrand::Rng,
    providers: &mut [ProviderKey],
    counts: &mut Counts,
) {
    let ok = Outcome {
        status: 200,
        attempt: 1,
        usage_known: true,
        ..Outcome::default()
    };
    // A refusal as the provider's: no headers, no delay named.
    let refused = Outcome {
        status: 429,
        error_type: "rate_limit_exceeded".into(),
        ..ok.clone()
    };
    for part in host.parts.iter_mut() {
        while part.in_flight.front().is_some_and(|f| f.1 <= t) {
            if let Some((lease, _, took)) = part.in_flight.pop_front() {
                host.stirred = true;
                let _ = host
                    .engine
                    .report(&lease, if took { &ok } else { &refused }, n);
                if !took {
                    part.retries += 1;
                }
            }
        }
    }
    let mut granted: Vec<(usize, String, Instant)> = Vec::new();
    if host.busy {
        for k in 0..spec.keys {
            let mut arrivals = 0;
            if host.arrivals_per_s > 0.0 {
                while host.next_arrival <= t {
                    arrivals += 1;
                    let gap = -(1.0 - rng.f64()).ln() / host.arrivals_per_s;
                    host.next_arrival += Duration::from_secs_f64(gap);
                }
            } else {
                arrivals = host.backlog.saturating_sub(host.parts[k].waiting.len());
            }
            arrivals += std::mem::take(&mut host.parts[k].retries);
            if arrivals > 0 {
                host.stirred = true;
            }
            for _ in 0..arrivals {
                let req = AcquireRequest {
                    key: key_name(k),
                    requests: 1,
                    max_wait: Duration::from_secs(3600),
                    ..AcquireRequest::default()
                };
                match host.engine.acquire(&req, n) {
                    Ok(Acquired::Granted(g)) => granted.push((k, g.lease_id, t)),
                    Ok(Acquired::Queued(id)) => {
                        host.parts[k].waiting.insert(id, t);
                    }
                    _ => {}
                }
            }
        }
    }
    if !host.stirred && host.wake.is_none_or(|w| w > t) {
        return;
    }
    host.engine.pump(n);
    host.stirred = false;
    host.wake = host.engine.next_wakeup(n);
    for (id, answer) in host.engine.drain_answers() {
        if let WaiterAnswer::Granted(g) = answer {
            if let Some(k) = key_index(&g.key) {
                let since = host.parts[k].waiting.remove(&id).unwrap_or(t);
                granted.push((k, g.lease_id, since));
            }
        } else {
            for p in host.parts.iter_mut() {
                p.waiting.remove(&id);
            }
        }
    }
    for (k, lease, since) in granted {
        counts.grants += 1;
        counts
            .waits
            .push(t.saturating_duration_since(since).as_millis() as u64);
        let took = providers[k].receive(t, spec.limit_per_s, spec.burst);
        host.parts[k]
            .in_flight
            .push_back((lease, t + spec.latency, took));
    }
}
