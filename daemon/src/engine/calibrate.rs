//! Calibration on the engine's side: limits from headers, the probe's cuts on refusals, header
//! families and usage evidence for output accounting, and slow start for keys nothing limits.
//! The bucket's own rules live in `bucket/`.

use super::*;

/// Which limit a 429 was about: the dimension its headers show exhausted, else the one its
/// error names, else requests.
pub(super) fn refused_dimension(outcome: &Outcome) -> Dimension {
    if let Some((d, _)) = outcome
        .signals
        .limits
        .iter()
        .find(|(_, l)| l.remaining.is_some_and(|r| r < 1.0))
    {
        return *d;
    }
    let text = format!("{} {}", outcome.error_type, outcome.error_message).to_ascii_lowercase();
    if text.contains("input token") || text.contains("input_token") || text.contains("input-token")
    {
        Dimension::InputTokens
    } else if text.contains("output token")
        || text.contains("output_token")
        || text.contains("output-token")
    {
        Dimension::OutputTokens
    } else if text.contains("token") || text.contains("tpm") {
        Dimension::Tokens
    } else {
        Dimension::Requests
    }
}

impl Engine {
    /// Recomputes every key's scope: after a key gains its first limits, its descendants
    /// count against it too.
    pub(super) fn rescope(&mut self) {
        for id in self.key_ids() {
            self.keys[id].scope = self.scope_of(id);
        }
        self.recount_waiting();
    }

    /// Whether nothing limits requests on this key yet: no configured or learned bucket and no
    /// concurrency bound anywhere in its scope.
    pub(super) fn unknown(&self, id: KeyId) -> bool {
        self.keys[id].scope.iter().all(|&k| {
            let key = &self.keys[k];
            key.max_concurrency.is_none() && key.buckets.iter().all(|b| !b.is_limited())
        })
    }

    /// A key no provider has answered for and nothing limits: start it slowly, so a crowd of
    /// workers does not storm a provider whose limits nobody knows. The first answers either
    /// name the limits (headers) or the probe goes on until a 429 finds them.
    pub(super) fn first_contact(&mut self, id: KeyId, now: Instant) {
        if self.keys[id].contacted || !self.unknown(id) {
            return;
        }
        let key = &mut self.keys[id];
        let i = key.minute_bucket(Dimension::Requests, now);
        key.buckets[i].start_first_contact(now);
        let fresh = key.buckets.len() == 1;
        self.mark_dirty(id);
        if fresh {
            self.rescope();
        }
    }

    /// Takes in what the provider's headers say: limits (which lower the effective limit below
    /// the config, and follow the headers both ways when learned), capacities inferred from
    /// remaining and reset, levels the provider says are lower than ours, and the header family
    /// that tells how output is counted.
    pub(super) fn apply_headers(&mut self, id: KeyId, outcome: &Outcome, at: Now) {
        let now = at.mono;
        let mut changed = false;
        let mut created = false;
        let mut made = Vec::new();
        let mut verdict = None;
        let mut window_found = Vec::new();
        let signals = &outcome.signals;
        let key = &mut self.keys[id];
        key.stats.headers_ignored_total += signals.ignored.len() as u64;
        let mut first_answer = false;
        if signals.limits.iter().any(|(_, l)| l.limit.is_some()) {
            // A provider that names some of its limits names all it enforces.
            for b in &mut key.buckets {
                first_answer |= b.end_first_contact();
            }
            changed |= first_answer;
        }
        for (dim, hl) in &signals.limits {
            let had = key.buckets.len();
            let i = if hl.limit.is_some() {
                key.minute_bucket(*dim, now)
            } else {
                match key.find_minute_bucket(*dim) {
                    Some(i) => i,
                    None => continue,
                }
            };
            if key.buckets.len() > had {
                created = true;
                made.push(*dim);
            }
            // In a fleet the remaining moves with the other hosts' grants too: no evidence.
            let reading = match (dim, hl.remaining) {
                (Dimension::Tokens, Some(rem))
                    if key.buckets[i].is_limited() && key.fleet.is_none() =>
                {
                    let b = &mut key.buckets[i];
                    b.refill(now);
                    // Where either side sat at its cap the refill was cut off: the gap moved
                    // for reasons of its own.
                    let usable = b.level() < b.capacity_now(now)
                        && hl.limit.is_none_or(|l| rem < l)
                        && rem < b.rate().capacity;
                    Some((b.level() - rem, rem, usable))
                }
                _ => None,
            };
            changed |= key.buckets[i].read_headers(hl, now);
            // What the headers say is left may not count what is in flight yet (sent before
            // the answer was written, arriving after): whether they predict a refusal is read
            // with it taken, so a refusal of one of those is theirs.
            let outstanding = match dim {
                Dimension::Requests => key.in_flight as f64,
                _ => key.stats.tokens_outstanding as f64,
            };
            key.buckets[i].headers_took(outstanding, now);
            if let (true, Some(rem), None) = (first_answer, hl.remaining, key.fleet) {
                // The first answer on a key nothing was known of: what the provider said remained
                // was before every request in flight now (each was granted after it, while
                // the first contact probed), so they come off it too.
                let in_flight = match dim {
                    Dimension::Requests => key.in_flight as f64,
                    _ => key.stats.tokens_outstanding as f64,
                };
                let b = &mut key.buckets[i];
                b.refill(now);
                let over = b.level() - (rem - in_flight);
                if over > 0.0 {
                    b.settle(-over, now);
                    changed = true;
                }
            }
            if let (Some(rem), Some(reset), None) = (hl.remaining, hl.reset, key.fleet) {
                let in_flight = match dim {
                    Dimension::Requests => key.in_flight as f64,
                    _ => key.stats.tokens_outstanding as f64,
                };
                let had_window = key.buckets[i].window().is_some();
                if key.buckets[i].read_window(rem, reset, hl.reset_granularity, in_flight, now)
                    && !had_window
                {
                    window_found.push(*dim);
                }
                changed |= key.buckets[i].window().is_some();
            }
            if let Some((gap, rem, usable)) = reading {
                let after = key.buckets[i].level() - rem;
                let counting = key.output_counted_as;
                if key.evidence.reading(gap, after, usable, counting) {
                    verdict = key.evidence.verdict();
                    changed = true;
                }
            }
        }
        if !outcome.headers.is_empty() {
            key.last_headers = Arc::new(bounded_headers(outcome.headers.iter().cloned()));
            key.headers_seq += 1;
            changed = true;
        }
        if changed || created {
            self.mark_dirty(id);
        }
        for dim in window_found {
            let name = self.keys[id].name.clone();
            if let Some(w) = self.keys[id]
                .find_minute_bucket(dim)
                .and_then(|i| self.keys[id].buckets[i].window().cloned())
            {
                let msg = format!(
                    "{dim} follow the provider's fixed windows: {:.0} every {:.1} s",
                    w.allowance,
                    w.length.as_secs_f64()
                );
                self.event(at, &name, EventKind::Calibrated, msg);
            }
        }
        if let Some(family) = signals.family {
            self.infer_family(id, family);
        }
        if let Some(v) = verdict {
            self.infer_usage(id, v);
        }
        if created {
            self.rescope();
            for dim in made {
                self.fleet_fresh_level(id, dim, now);
            }
        }
    }

    /// The header family a key's responses carry says how its provider counts output, for the
    /// key and the ancestors it counts against, unless their config says otherwise.
    pub(super) fn infer_family(&mut self, id: KeyId, family: Provider) {
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let key = &mut self.keys[k];
            if key.family != Some(family) {
                key.family = Some(family);
                key.resolve_accounting();
                self.mark_dirty(k);
            }
        }
    }

    /// What the usage says of how output counts holds for the key and the ancestors it counts
    /// against (which see no readings of their own), unless their config says otherwise.
    pub(super) fn infer_usage(&mut self, id: KeyId, verdict: OutputCounting) {
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let key = &mut self.keys[k];
            key.evidence.restore(verdict);
            key.resolve_accounting();
            self.mark_dirty(k);
        }
    }

    /// Whether a refusal is one the provider's headers did not predict: they said there was
    /// room for the refused request in every dimension they describe (the refusal's own, when
    /// it carries them; else the last ones, less what was granted since). Then something in
    /// between (a gateway, nginx) enforces less than they describe.
    pub(super) fn unpredicted(&self, lease: &Lease, outcome: &Outcome, now: Instant) -> bool {
        let told: Vec<_> = outcome
            .signals
            .limits
            .iter()
            .filter_map(|(d, l)| l.remaining.map(|r| (*d, r)))
            .collect();
        if !told.is_empty() {
            // What is left after a request is what it needed less: it had room if what
            // remains covers what it needed.
            return told
                .iter()
                .all(|&(d, r)| r >= lease.need.amount(d).max(1.0));
        }
        let said: Vec<bool> = self.keys[lease.key]
            .buckets
            .iter()
            .filter_map(|b| b.headers_said_room(now))
            .collect();
        !said.is_empty() && said.iter().all(|&room| room)
    }

    /// A 429 or 529 on a request our buckets let through: the limit is lower than we think
    /// (a header-less provider, a wrong config, another consumer of the key, a limiter in
    /// between: `beneath`, a refusal the headers did not predict). Lowers the effective rate
    /// of the dimension that refused, found by probing from then on.
    pub(super) fn refused(
        &mut self,
        id: KeyId,
        lease: &Lease,
        outcome: &Outcome,
        beneath: bool,
        until: Instant,
        now: Now,
    ) {
        let dim = refused_dimension(outcome);
        let base = self.base;
        let fault_until = self.fault_in_force(id, now.mono);
        let says_nothing = dim == Dimension::Requests
            && outcome.signals.retry_after.is_none()
            && (beneath || self.probed_bucket(id, outcome).is_some());
        let answered = super::report::answered_at(outcome.answered_unix_ms, lease.granted_at, now);
        let key = &mut self.keys[id];
        key.stats.recent_grants.refused(lease.granted_at, answered);
        // A provider that says nothing, not even when to come back, most likely counts over a
        // second (`report::PROBED_WINDOW`, as OpenAI enforces a minute's limit and gateways
        // keep a rolling second): it took what it accepted in the second before this request
        // and no more. Per minute.
        // Only when the second before was the provider's whole: not within a second of a cut
        // (its cooldown left part of that second idle, and what it took then says less).
        let whole_second = key.stats.since_cut.is_none_or(|c| {
            lease.granted_at.saturating_duration_since(c.at) >= super::report::PROBED_WINDOW
        });
        let last_window = (says_nothing && whole_second)
            .then(|| {
                key.stats
                    .recent_grants
                    .within(lease.granted_at, super::report::PROBED_WINDOW)
            })
            .flatten()
            .filter(|&n| n > 0)
            .map(|n| n as f64 * 60.0 / super::report::PROBED_WINDOW.as_secs_f64());
        // Per minute, over the last few seconds: what was granted (the rate the provider just
        // refused, for a bucket that had no limit), and what the provider accepted (long enough
        // that its burst weighs little against its rate).
        let granted_since = key.stats.first_grant.unwrap_or(now.mono);
        let per_minute =
            |w: &mut MinuteWindow, since| w.per_second(base, since, now.mono, 5) * 60.0;
        // Only requests and total tokens are counted per key; a probe of input or output tokens
        // starts from a limit the config or headers gave.
        let (granted, accepted) = match dim {
            Dimension::Requests => (
                per_minute(&mut key.stats.granted, granted_since),
                key.stats
                    .first_success
                    .map(|s| (per_minute(&mut key.stats.succeeded, s), s)),
            ),
            Dimension::Tokens => (
                per_minute(&mut key.stats.tokens_granted, granted_since),
                key.stats
                    .first_success
                    .map(|s| (per_minute(&mut key.stats.succeeded_tokens, s), s)),
            ),
            Dimension::InputTokens | Dimension::OutputTokens => (0.0, None),
        };
        // Answers take a while to come back (refusals often less): until some have, what the
        // provider accepted says nothing yet.
        let accepted = accepted
            .filter(|(_, s)| now.mono.saturating_duration_since(*s) >= ACCEPTED_HISTORY)
            .map(|(a, _)| a);
        // A refusal soon after a cut bounds the limit from above by a little more than what
        // the provider accepted between the two (`aimd::SINCE_CUT_SLACK`): its burst was spent
        // at both. Refusing on and on since that cut (two refusals or more), it was at its
        // limit all along, and what it accepted measures its rate better than the last seconds
        // (which may hold the burst it began with); after one refusal the rate may have been
        // under the limit meanwhile, so it is a bound, not a measure.
        if let Some(c) = key.stats.since_cut.as_mut() {
            c.refusals += 1;
        }
        let since_cut = key.stats.since_cut.and_then(|c| {
            let mut elapsed = now.mono.saturating_duration_since(c.at);
            let counted = match dim {
                // The requests it refused meanwhile (this one aside) too: a provider that
                // counts them (OpenAI says it does) took them out of what it refilled, and
                // what it accepted alone would hold the rate well under its limit for as long
                // as the creep takes to find it again. One that does not count them is
                // overestimated by them, which costs a cut more at most.
                // Of requests, what was sent from when requests went again up to this one,
                // less what was refused: those still in flight were taken (a refusal comes
                // back at once), so the answers' latency does not count as a lower limit.
                Dimension::Requests => {
                    let sent = lease.granted_at.saturating_duration_since(c.at);
                    match key.stats.recent_grants.within(lease.granted_at, sent) {
                        Some(n) if sent > Duration::ZERO => {
                            elapsed = sent;
                            n + c.refusals.saturating_sub(1)
                        }
                        _ => c.requests + c.refusals.saturating_sub(1),
                    }
                }
                Dimension::Tokens => c.tokens,
                Dimension::InputTokens | Dimension::OutputTokens => return None,
            };
            (ACCEPTED_HISTORY..=BETWEEN_CUTS)
                .contains(&elapsed)
                .then(|| (counted as f64 / elapsed.as_secs_f64() * 60.0, c.refusals))
        });
        let between_cuts = since_cut.filter(|(_, n)| *n >= 2).map(|(m, _)| m);
        let accepted = between_cuts.or(accepted);
        let had = key.buckets.len();
        let i = key.minute_bucket(dim, now.mono);
        let b = &mut key.buckets[i];
        let cut = b.refused(
            bucket::ProviderRefusal {
                granted_at: lease.granted_at,
                cooling_until: until,
                granted,
                accepted,
                since_cut: since_cut.map(|(m, _)| m),
                last_window,
                fault_until,
                beneath,
            },
            now.mono,
        );
        if !b.is_limited() {
            // Nothing to lower and nothing measured: leave the key as it was.
            if key.buckets.len() > had {
                key.buckets.pop();
            }
            return;
        }
        self.mark_dirty(id);
        if let Some(from) = cut {
            // What the provider takes is measured from when requests go again: the cooldown
            // sends nothing, and counting it would take our idleness for its limit.
            self.keys[id].stats.since_cut = Some(SinceCut {
                at: until.max(now.mono),
                requests: 0,
                tokens: 0,
                refusals: 0,
            });
            let b = &self.keys[id].buckets[i];
            let per = b.rate().period.as_str();
            let from = if from.is_finite() {
                format!("from {from:.0} ")
            } else {
                String::new()
            };
            let msg = format!(
                "{dim} limit lowered {from}to {:.0}/{per} (probing): the provider refused a request{}",
                b.rate().limit,
                accepted.map_or(String::new(), |a| format!("; it accepted {a:.0}/{per} lately")),
            );
            let name = self.keys[id].name.clone();
            self.event(now, &name, EventKind::Calibrated, msg);
        }
        if self.keys[id].buckets.len() > had {
            self.rescope();
        }
    }
}

/// The most last headers kept per key, and the longest name and value kept.
pub const KEPT_HEADERS: usize = 32;
pub const KEPT_HEADER_NAME: usize = 64;
pub const KEPT_HEADER_VALUE: usize = 64;

/// The rate-limit headers worth keeping of a response, within a small size: a client cannot
/// make the daemon hold more than `KEPT_HEADERS` short entries per key.
pub fn bounded_headers(
    headers: impl IntoIterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    headers
        .into_iter()
        .filter(|(n, _)| n.len() <= KEPT_HEADER_NAME && super::headers::is_limit_header(n))
        .map(|(n, v)| {
            let cut = v
                .char_indices()
                .nth(KEPT_HEADER_VALUE)
                .map_or(v.len(), |(i, _)| i);
            (n, v[..cut].to_string())
        })
        .take(KEPT_HEADERS)
        .collect()
}

#[cfg(test)]
mod bounded_tests {
    use super::*;

    #[test]
    fn only_the_limit_headers_the_parser_reads_are_kept_and_short() {
        let junk = (0..200).map(|i| (format!("x-ratelimit-junk-{i}"), "v".repeat(4000)));
        let known = ["requests", "tokens"].into_iter().flat_map(|d| {
            ["limit", "remaining", "reset"]
                .into_iter()
                .map(move |f| (format!("x-ratelimit-{f}-{d}"), "9".repeat(4000)))
        });
        let other = [("content-type".to_string(), "x".to_string())];
        let kept = bounded_headers(junk.chain(known).chain(other));
        assert_eq!(kept.len(), 6, "{kept:?}");
        assert!(kept.values().all(|v| v.len() == KEPT_HEADER_VALUE));
        assert!(!kept.contains_key("content-type"));
        let total: usize = kept.iter().map(|(n, v)| n.len() + v.len()).sum();
        assert!(total < 1024, "{total}");
    }
}
