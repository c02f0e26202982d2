//! Who spends the quota: requests, tokens and refusals per client (its `client_id`) and per run,
//! for the clients panel of `llmctl top` and `llmctl status`.

use super::*;

/// The most clients and runs whose spending is kept; the least recently seen go first.
pub const MAX_SPENDERS: usize = 10_000;
/// A client or run with nothing granted this long, and nothing held or waiting, is forgotten.
pub const SPENDER_IDLE: Duration = Duration::from_secs(15 * 60);

#[derive(Clone, Debug)]
pub(super) struct Spending {
    granted: MinuteWindow,
    tokens: MinuteWindow,
    granted_total: u64,
    rate_limited_total: u64,
    last_seen: Instant,
}

impl Spending {
    fn new(now: Instant) -> Spending {
        Spending {
            granted: MinuteWindow::default(),
            tokens: MinuteWindow::default(),
            granted_total: 0,
            rate_limited_total: 0,
            last_seen: now,
        }
    }
}

/// What one client or run spends, as status shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct SpenderStatus {
    pub id: String,
    pub requests_per_second: f64,
    pub tokens_per_minute: f64,
    pub in_flight: u64,
    pub queue_depth: u64,
    pub granted_total: u64,
    pub rate_limited_total: u64,
}

/// Which table a spender is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum SpenderKind {
    Client,
    Run,
}

impl Engine {
    fn spending(&mut self, kind: SpenderKind, id: &str, now: Instant) -> Option<&mut Spending> {
        if id.is_empty() {
            return None;
        }
        let table = &mut self.spenders;
        if !table.contains_key(&(kind, id.to_string())) && table.len() >= MAX_SPENDERS {
            if let Some(oldest) = table
                .iter()
                .min_by_key(|(_, s)| s.last_seen)
                .map(|(k, _)| k.clone())
            {
                table.remove(&oldest);
            }
        }
        let s = table
            .entry((kind, id.to_string()))
            .or_insert_with(|| Spending::new(now));
        s.last_seen = now;
        Some(s)
    }

    /// A grant: counted on its client and its run.
    pub(super) fn spent(&mut self, ctx: &LeaseCtx, tokens: u64, now: Instant) {
        let base = self.base;
        for (kind, id) in [
            (SpenderKind::Client, ctx.client_id.clone()),
            (SpenderKind::Run, ctx.run_id.clone()),
        ] {
            if let Some(s) = self.spending(kind, &id, now) {
                s.granted_total += 1;
                s.granted.add(base, now, 1);
                s.tokens
                    .add(base, now, u32::try_from(tokens).unwrap_or(u32::MAX));
            }
        }
    }

    /// A provider refusal (429, 529) on a lease of this client and run.
    pub(super) fn refused_by_provider(&mut self, ctx: &LeaseCtx, now: Instant) {
        for (kind, id) in [
            (SpenderKind::Client, ctx.client_id.clone()),
            (SpenderKind::Run, ctx.run_id.clone()),
        ] {
            if let Some(s) = self.spending(kind, &id, now) {
                s.rate_limited_total += 1;
            }
        }
    }

    /// Every client's or run's spending, most tokens first.
    pub(super) fn spenders(&mut self, kind: SpenderKind, now: Instant) -> Vec<SpenderStatus> {
        let id_of = |ctx: &LeaseCtx| match kind {
            SpenderKind::Client => ctx.client_id.clone(),
            SpenderKind::Run => ctx.run_id.clone(),
        };
        let mut held: HashMap<String, (u64, u64)> = HashMap::new();
        for l in self.leases.values().filter(|l| l.holds_slot) {
            held.entry(id_of(&l.ctx)).or_default().0 += 1;
        }
        for w in self.queue.values() {
            held.entry(id_of(&w.ctx)).or_default().1 += 1;
        }
        // Clients come and go (a client_id per process): the idle ones are forgotten.
        self.spenders.retain(|(k, id), s| {
            *k != kind
                || held.contains_key(id)
                || now.saturating_duration_since(s.last_seen) < SPENDER_IDLE
        });
        let base = self.base;
        let mut out: Vec<SpenderStatus> = self
            .spenders
            .iter_mut()
            .filter(|((k, _), _)| *k == kind)
            .map(|((_, id), s)| {
                let (in_flight, queue_depth) = held.get(id).copied().unwrap_or_default();
                SpenderStatus {
                    id: id.clone(),
                    requests_per_second: s.granted.sum_last(base, now, 10) as f64 / 10.0,
                    tokens_per_minute: s.tokens.sum_last(base, now, 60) as f64,
                    in_flight,
                    queue_depth,
                    granted_total: s.granted_total,
                    rate_limited_total: s.rate_limited_total,
                }
            })
            .collect();
        out.sort_by(|a, b| {
            b.tokens_per_minute
                .total_cmp(&a.tokens_per_minute)
                .then(b.requests_per_second.total_cmp(&a.requests_per_second))
                .then(a.id.cmp(&b.id))
        });
        out
    }

    /// Every client's spending (by `client_id`), most tokens first.
    pub fn clients_status(&mut self, now: Now) -> Vec<SpenderStatus> {
        self.spenders(SpenderKind::Client, now.mono)
    }

    /// Every run's spending, most tokens first.
    pub fn runs_spending(&mut self, now: Now) -> Vec<SpenderStatus> {
        self.spenders(SpenderKind::Run, now.mono)
    }
}
