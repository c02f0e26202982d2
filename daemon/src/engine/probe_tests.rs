//! Limits found without headers, on a fake clock: AIMD after 429s, first contact, ramp up after
//! idleness, and learned limits across a restart.

use super::calibrate_tests::*;
use super::shapes_tests::refused_for_concurrency;
use super::tests::*;
use super::*;

#[test]
fn a_429_lowers_the_rate_once_per_flight_and_empties_the_bucket_until_the_cooldown_ends() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 1200.0, 20.0)]),
    )])
    .filled();
    let a = lease(&fx.acquire("k", 0, 0, 0, 0));
    let b = lease(&fx.acquire("k", 0, 0, 0, 0));
    let r429 = |ms: i64| {
        let mut o = with_headers(429, &[("retry-after-ms", "500")], T0_UNIX + ms);
        o.error_type = "rate_limit_exceeded".into();
        o
    };
    fx.e.report(&a, &r429(2000), fx.now(2000)).expect("report");
    let st = fx.key_status("k", 2000);
    let bk = bucket_of(&st, Dimension::Requests);
    assert_eq!(bk.bucket.source, LimitSource::Aimd);
    // No answer has come back yet to say what the provider accepts: the usual 15 %.
    assert!(
        (bk.bucket.limit - 1020.0).abs() < 1e-6,
        "{}",
        bk.bucket.limit
    );
    assert_eq!(bk.configured_limit, Some(1200.0));
    // Empty until the cooldown (the provider's 500 ms) ends, then refilling for the probe.
    assert!(fx.level("k", Dimension::Requests, 2500).abs() < 0.05);
    assert!(matches!(
        fx.acquire("k", 0, 0, 0, 2500),
        Acquired::NotGranted(_)
    ));
    // b was in flight when the rate was cut: its 429, even past the hold, does not cut again.
    let cut = bk.bucket.limit;
    let late = 2000 + bucket::aimd::CUT_HOLD.as_millis() as u64 + 1;
    fx.e.report(&b, &r429(late as i64), fx.now(late))
        .expect("report");
    assert_eq!(
        bucket_of(&fx.key_status("k", late), Dimension::Requests)
            .bucket
            .limit,
        cut
    );
    // One granted after the cut does (once b's cooldown is over and the bucket refilled).
    let then = late + 600;
    let c = lease(&fx.acquire("k", 0, 0, 0, then));
    fx.e.report(&c, &r429(then as i64), fx.now(then))
        .expect("report");
    assert!(
        bucket_of(&fx.key_status("k", then), Dimension::Requests)
            .bucket
            .limit
            < cut
    );
}

#[test]
fn the_probe_rises_only_with_demand_and_never_above_the_config() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 1200.0, 20.0)]),
    )])
    .filled();
    let a = lease(&fx.acquire("k", 0, 0, 0, 0));
    fx.e.report(
        &a,
        &with_headers(429, &[("retry-after-ms", "1")], T0_UNIX),
        fx.now(0),
    )
    .expect("report");
    let cut = bucket_of(&fx.key_status("k", 0), Dimension::Requests)
        .bucket
        .limit;
    // Requests that find room at once are no demand: nothing rises.
    for ms in (1000..5000).step_by(250) {
        let id = lease(&fx.acquire("k", 0, 0, 0, ms));
        fx.e.report(&id, &ok(200), fx.now(ms)).expect("report");
    }
    assert_eq!(
        bucket_of(&fx.key_status("k", 5000), Dimension::Requests)
            .bucket
            .limit,
        cut
    );
    // Demand beyond the bucket: the rate climbs back, and stops at the configured limit.
    let mut last = cut;
    let mut ms = 5000;
    while ms < 120_000 {
        if let Acquired::Granted(g) = fx.acquire("k", 0, 0, 0, ms) {
            fx.e.report(&g.lease_id, &ok(200), fx.now(ms))
                .expect("report");
        }
        let l = bucket_of(&fx.key_status("k", ms), Dimension::Requests)
            .bucket
            .limit;
        assert!(l >= last && l <= 1200.0, "{last} then {l}");
        last = l;
        ms += 10;
    }
    let b = bucket_of(&fx.key_status("k", ms), Dimension::Requests);
    assert_eq!(
        (b.bucket.limit, b.bucket.source),
        (1200.0, LimitSource::Config)
    );
}

/// A provider that limits requests with a continuously refilled bucket, sends no limit
/// headers, and answers after `latency`.
struct ModelProvider {
    per_ms: f64,
    capacity: f64,
    level: f64,
    at: u64,
    /// Refused requests count against the limit (OpenAI says they do; Bedrock's do not).
    counts_rejected: bool,
}

impl ModelProvider {
    fn full(per_sec: f64, capacity: f64, counts_rejected: bool) -> ModelProvider {
        ModelProvider {
            per_ms: per_sec / 1000.0,
            capacity,
            level: capacity,
            at: 0,
            counts_rejected,
        }
    }

    fn admit(&mut self, ms: u64) -> Result<(), u64> {
        self.level = (self.level + (ms - self.at) as f64 * self.per_ms).min(self.capacity);
        self.at = ms;
        if self.counts_rejected {
            self.level -= 1.0;
            if self.level >= 0.0 {
                return Ok(());
            }
            // Refused, and counted: what it would take for one request to go.
            return Err(((-self.level) / self.per_ms).ceil() as u64);
        }
        if self.level >= 1.0 {
            self.level -= 1.0;
            return Ok(());
        }
        Err(((1.0 - self.level) / self.per_ms).ceil() as u64)
    }
}

/// What a run against a `ModelProvider` saw: when requests were sent and refused, and the
/// requests limit in force every 100 ms.
struct Run {
    sent: Vec<u64>,
    refused: Vec<u64>,
    limits_seen: Vec<(u64, f64)>,
}

impl Run {
    fn after(v: &[u64], from: u64) -> f64 {
        v.iter().filter(|&&t| t >= from).count() as f64
    }
}

/// `workers` workers, always more demand than the limit, on key `h` with no config, each
/// answer back `latency` ms after it was sent, for `millis` ms; a refusal is `refusal(wait)`.
fn drive(
    provider: &mut ModelProvider,
    workers: usize,
    latency: u64,
    millis: u64,
    refusal: impl Fn(u64, i64) -> Outcome,
) -> Run {
    drive_through(
        workers,
        Latency {
            answer: latency,
            spread: 0,
            refusal: latency,
        },
        millis,
        |ms, _| provider.admit(ms),
        |answer, unix_ms| match answer {
            Ok(()) => ok(200),
            Err(wait) => refusal(wait, unix_ms),
        },
    )
    .0
}

/// How long answers take: `answer` ms and up to `spread` more (spread evenly), a refusal
/// `refusal` ms.
struct Latency {
    answer: u64,
    spread: u64,
    refusal: u64,
}

/// `drive` through whatever admits: `admit(ms, in_flight)` (the request itself not counted)
/// says whether a request goes, the answer to it is `answer(admitted, unix_ms)`, back after
/// `latency`. Returns the run and the engine, for its status at the end.
fn drive_through(
    workers: usize,
    latency: Latency,
    millis: u64,
    mut admit: impl FnMut(u64, usize) -> Result<(), u64>,
    answer: impl Fn(Result<(), u64>, i64) -> Outcome,
) -> (Run, Fx) {
    let mut fx = Fx::new(vec![]);
    let mut flights: Vec<(u64, String, Result<(), u64>)> = Vec::new();
    let mut run = Run {
        sent: Vec::new(),
        refused: Vec::new(),
        limits_seen: Vec::new(),
    };
    for ms in 0..millis {
        flights.sort_by_key(|f| f.0);
        while flights.first().is_some_and(|f| f.0 <= ms) {
            let (_, lease_id, admitted) = flights.remove(0);
            let o = answer(admitted, T0_UNIX + ms as i64);
            fx.e.report(&lease_id, &o, fx.now(ms)).expect("report");
        }
        for _ in 0..workers {
            let got = fx.e.acquire(
                &AcquireRequest {
                    key: "h".into(),
                    ..Default::default()
                },
                fx.now(ms),
            );
            let g = match got {
                Ok(Acquired::Granted(g)) => g,
                Ok(Acquired::Queued(w)) => {
                    // Its max_wait is over: as the server does, give up the wait.
                    fx.e.cancel(w, fx.now(ms));
                    break;
                }
                _ => break,
            };
            let in_flight = flights.iter().filter(|f| f.2.is_ok()).count();
            let admitted = admit(ms, in_flight);
            if admitted.is_err() {
                run.refused.push(ms);
            }
            run.sent.push(ms);
            let back = ms
                + match admitted {
                    Ok(()) => latency.answer + (run.sent.len() as u64 * 37) % (latency.spread + 1),
                    Err(_) => latency.refusal,
                };
            flights.push((back, g.lease_id, admitted));
        }
        if ms % 100 == 0 {
            if let Some(b) =
                fx.e.status(fx.now(ms))
                    .into_iter()
                    .find(|k| k.key == "h")
                    .and_then(|k| k.buckets.into_iter().next())
            {
                run.limits_seen.push((ms, b.bucket.limit));
            }
        }
    }
    (run, fx)
}

/// A header-less provider's 429 naming its delay in retry-after-ms.
fn refused_after_ms(wait: u64, unix_ms: i64) -> Outcome {
    let mut o = with_headers(429, &[("retry-after-ms", &wait.to_string())], unix_ms);
    o.error_type = "rate_limit_exceeded".into();
    o
}

/// A header-less provider's 429 that names no delay.
fn refused_naming_nothing(unix_ms: i64) -> Outcome {
    let mut o = with_headers(429, &[], unix_ms);
    o.error_type = "rate_limit_exceeded".into();
    o
}

#[test]
fn a_header_less_limit_is_found_and_held_without_oscillation() {
    // No config, no headers: 20 requests/s with a burst of 5, rejected requests counted, 96
    // workers, answers after 50 ms, the provider's delay in retry-after-ms.
    let mut provider = ModelProvider::full(20.0, 5.0, true);
    let run = drive(&mut provider, 96, 50, 120_000, refused_after_ms);
    let after = Run::after;
    // Once found (the first 10 s), the limit is used: at least 90 % of 20/s...
    let rate = after(&run.sent, 10_000) - after(&run.refused, 10_000);
    assert!(rate / 110.0 >= 18.0, "{} accepted per second", rate / 110.0);
    // ...with few refusals (each probe above the limit costs one or two)...
    let share = after(&run.refused, 10_000) / after(&run.sent, 10_000);
    assert!(share <= 0.03, "{:.1} % refused", share * 100.0);
    // ...and no oscillation: the probed limit stays within a narrow band around 1200/min.
    let steady: Vec<f64> = run
        .limits_seen
        .iter()
        .filter(|(t, _)| *t >= 10_000)
        .map(|(_, l)| *l)
        .collect();
    assert_eq!(steady.len(), 1100, "the probe held a limit all along");
    let (lo, hi) = steady
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), l| (lo.min(*l), hi.max(*l)));
    assert!(
        lo >= 1200.0 * 0.8 && hi <= 1200.0 * 1.25,
        "the limit swung from {lo:.0} to {hi:.0} per minute"
    );
}

#[test]
fn a_steady_header_less_limit_costs_few_refusals_from_the_first_request_on() {
    // Bedrock's shape: 5 requests/s with a burst of 5, refused requests not counted, no
    // limit headers and no delay named (a ThrottlingException), 48 workers, answers after
    // `latency` ms (the fake provider's and slower), for 80 s (400 calls' worth): slow start,
    // the limit found, then held, found again through the burst the provider refilled while
    // it was held, and held longer. (With 300 ms answers the first contact alone costs about
    // 11: what slow start sends before its first refusal comes back; 14 of 418 in all.)
    for latency in [20, 100] {
        let mut provider = ModelProvider::full(5.0, 5.0, false);
        let run = drive(&mut provider, 48, latency, 80_000, |_, unix_ms| {
            let mut o = with_headers(429, &[], unix_ms);
            o.error_type = "ThrottlingException".into();
            o
        });
        let after = Run::after;
        // From the first request on, first contact included: at most 2 % refused...
        let share = after(&run.refused, 0) / after(&run.sent, 0);
        assert!(
            share <= 0.02,
            "{latency} ms: {} of {} refused ({:.1} %) at {:?}",
            run.refused.len(),
            run.sent.len(),
            share * 100.0,
            run.refused
        );
        // ...once held (the first 10 s), each creep above it costs one refusal and the hold
        // after it is longer (4 s, 16 s, 60 s): a refusal or two a minute, not one every
        // few seconds...
        let held = run.refused.iter().filter(|&&t| t >= 10_000).count();
        assert!(
            held <= 3,
            "{latency} ms: {held} refusals after the first 10 s: {:?}",
            run.refused
        );
        // ...and, once found (the first 5 s), at least 90 % of the limit used.
        let accepted = after(&run.sent, 5_000) - after(&run.refused, 5_000);
        assert!(
            accepted / 75.0 >= 4.5,
            "{latency} ms: {:.2} accepted per second",
            accepted / 75.0
        );
    }
}

#[test]
fn first_contact_starts_slowly_and_ends_when_headers_name_the_limits() {
    let mut fx = Fx::new(vec![]);
    let granted = (0..10)
        .filter(|_| matches!(fx.acquire("new", 0, 0, 0, 0), Acquired::Granted(_)))
        .count();
    assert_eq!(granted, bucket::aimd::START_BURST as usize);
    let b = bucket_of(&fx.key_status("new", 0), Dimension::Requests);
    assert_eq!(b.bucket.source, LimitSource::Aimd);
    // A response naming limits ends the probing: the headers rule.
    report(
        &mut fx,
        "new",
        200,
        &requests_headers("6000", "90", "100ms"),
        1000,
    );
    let b = bucket_of(&fx.key_status("new", 1000), Dimension::Requests);
    assert_eq!(
        (b.bucket.limit, b.bucket.source),
        (6000.0, LimitSource::Headers)
    );
    // A provider that names only token limits has none on requests: no bucket is left.
    let mut fx = Fx::new(vec![]);
    report(
        &mut fx,
        "t",
        200,
        &[("x-ratelimit-limit-tokens", "90000".into())],
        0,
    );
    let st = fx.key_status("t", 0);
    assert!(st
        .buckets
        .iter()
        .all(|b| b.bucket.dimension == Dimension::Tokens));
}

#[test]
fn first_contact_without_answers_doubles_ahead_of_demand() {
    let mut fx = Fx::new(vec![]);
    // A thousand requests a second, and a provider that never answers with a refusal.
    let mut refused_late = 0;
    for ms in (0..6000).step_by(5) {
        for _ in 0..5 {
            let granted = matches!(fx.acquire("open", 0, 0, 0, ms), Acquired::Granted(_));
            if !granted && ms >= 5000 {
                refused_late += 1;
            }
        }
    }
    // Within a few seconds the probe is ahead of the demand: nothing waits any more.
    assert_eq!(refused_late, 0);
    let b = bucket_of(&fx.key_status("open", 6000), Dimension::Requests);
    assert!(b.bucket.limit >= 60_000.0, "{}", b.bucket.limit);
    // With no demand past it, it stops there; demand far beyond ends the probe altogether.
    let mut b = bucket::Bucket::learned(Dimension::Requests, fx.base);
    b.start_first_contact(fx.base);
    let mut t = fx.base;
    for _ in 0..40 {
        t += bucket::aimd::STEP;
        b.on_short();
        b.step(t);
    }
    assert!(!b.is_limited());
}

#[test]
fn ramp_up_climbs_from_a_fifth_after_idleness() {
    let l = KeyLimits {
        rates: vec![rate(Dimension::Requests, 6000.0, 100.0)],
        ramp_up: Some(Duration::from_secs(30)),
        ..KeyLimits::default()
    };
    let mut fx = Fx::new(vec![("r", l)]).filled();
    let burst = |fx: &mut Fx, ms| {
        (0..200)
            .filter(|_| matches!(fx.acquire("r", 0, 0, 0, ms), Acquired::Granted(_)))
            .count()
    };
    // Idle since start: a fifth of the burst at first.
    assert_eq!(burst(&mut fx, 0), 20);
    // Halfway through the ramp: 60 % of the rate (60/s) refills 6 in 100 ms.
    burst(&mut fx, 15_000);
    let got = burst(&mut fx, 15_100);
    assert!((5..=7).contains(&got), "{got}");
    // Past the ramp: all of it.
    burst(&mut fx, 31_000);
    assert_eq!(burst(&mut fx, 32_000), 100);
    // The anthropic preset ramps by itself.
    let l = KeyLimits {
        rates: vec![rate(Dimension::Requests, 6000.0, 100.0)],
        provider: Some(Provider::Anthropic),
        ..KeyLimits::default()
    };
    let mut fx = Fx::new(vec![("a", l)]).filled();
    assert_eq!(
        (0..200)
            .filter(|_| matches!(fx.acquire("a", 0, 0, 0, 0), Acquired::Granted(_)))
            .count(),
        20
    );
}

#[test]
fn bedrocks_too_many_tokens_cuts_tokens_and_too_many_requests_cuts_requests() {
    for (message, tokens_cut) in [
        ("Too many tokens, please wait before trying again.", true),
        ("Too many requests, please wait before trying again.", false),
    ] {
        let mut fx = Fx::new(vec![]);
        let mut ms = 0;
        for _ in 0..3 {
            let a = lease(&fx.acquire("bedrock/m", 500, 500, 0, ms));
            fx.e.report(&a, &ok(200), fx.now(ms + 20)).expect("report");
            ms += 300;
        }
        let requests_before = bucket_of(&fx.key_status("bedrock/m", ms), Dimension::Requests);
        let a = lease(&fx.acquire("bedrock/m", 500, 500, 0, ms));
        let mut o = with_headers(429, &[], T0_UNIX + ms as i64);
        o.error_type = "ThrottlingException".into();
        o.error_message = message.into();
        fx.e.report(&a, &o, fx.now(ms + 20)).expect("report");
        let st = fx.key_status("bedrock/m", ms + 20);
        let requests = bucket_of(&st, Dimension::Requests).bucket.limit;
        let tokens = st
            .buckets
            .iter()
            .find(|b| b.bucket.dimension == Dimension::Tokens);
        if tokens_cut {
            assert_eq!(
                tokens.map(|b| b.bucket.source),
                Some(LimitSource::Aimd),
                "{message}: {st:?}"
            );
            assert!(
                requests >= requests_before.bucket.limit,
                "{message}: {st:?}"
            );
        } else {
            assert!(tokens.is_none(), "{message}: {st:?}");
            assert!(requests < requests_before.bucket.limit, "{message}: {st:?}");
        }
    }
}

#[test]
fn learned_limits_survive_a_restart() {
    let mut fx = Fx::new(vec![(
        "c",
        limits(vec![rate(Dimension::Requests, 2400.0, 40.0)]),
    )])
    .filled();
    report(
        &mut fx,
        "c",
        200,
        &requests_headers("1200", "2", "150ms"),
        0,
    );
    report(
        &mut fx,
        "p",
        200,
        &[("anthropic-ratelimit-tokens-limit", "90000".into())],
        0,
    );
    let a = lease(&fx.acquire("c", 0, 0, 0, 2000));
    fx.e.report(&a, &with_headers(429, &[], T0_UNIX + 2000), fx.now(2000))
        .expect("report");
    let before = bucket_of(&fx.key_status("c", 2000), Dimension::Requests);
    // Through the store, as the daemon does.
    let dir = std::env::temp_dir().join(format!("llmctl-learned-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = crate::store::Store::open(&dir, 1).expect("store").0;
    store
        .save_keys(&fx.e.snapshot_all(fx.now(2000)))
        .expect("save");
    let loaded = store.load().expect("load");
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(loaded.unreadable.is_empty(), "{:?}", loaded.unreadable);
    let snaps = loaded.keys;

    let mut fresh = Fx::new(vec![(
        "c",
        limits(vec![rate(Dimension::Requests, 2400.0, 40.0)]),
    )]);
    fresh.e.restore(&snaps, &[], fresh.now(0));
    let after = bucket_of(&fresh.key_status("c", 0), Dimension::Requests);
    assert_eq!(
        (
            after.bucket.limit,
            after.bucket.capacity,
            after.bucket.source,
            after.configured_limit
        ),
        (
            before.bucket.limit,
            before.bucket.capacity,
            LimitSource::Aimd,
            Some(2400.0)
        )
    );
    let p = fresh.key_status("p", 0);
    assert_eq!(
        (p.output_counted_as_source, p.buckets[0].bucket.source),
        (AccountingSource::Headers, LimitSource::Headers)
    );
}

/// A refusal on `k` at each of `at` ms (or when the cooldown before it ended), on a lease
/// granted then; returns when the last came.
fn refuse_at(fx: &mut Fx, at: &[u64]) -> u64 {
    let mut last = 0;
    for &ms in at {
        let mut ms = ms.max(last);
        // The bucket is empty after a refusal: a lease comes from a fresh fill.
        fx.e.fill(fx.now(ms));
        let l = match fx.acquire("k", 0, 0, 0, ms) {
            Acquired::NotGranted(r) => {
                ms = (r.not_before_unix_ms - T0_UNIX) as u64;
                fx.e.fill(fx.now(ms));
                lease(&fx.acquire("k", 0, 0, 0, ms))
            }
            granted => lease(&granted),
        };
        let mut o = with_headers(429, &[("retry-after-ms", "100")], T0_UNIX + ms as i64);
        o.error_type = "rate_limit_exceeded".into();
        fx.e.report(&l, &o, fx.now(ms)).expect("report");
        last = ms;
    }
    last
}

/// Asks for `k` at `ms`, or when the cooldown then ends; returns when it was granted.
fn asked_at(fx: &mut Fx, ms: u64) -> u64 {
    let mut at = ms;
    loop {
        match fx.acquire("k", 0, 0, 0, at) {
            Acquired::NotGranted(r) => at = at.max((r.not_before_unix_ms - T0_UNIX) as u64 + 1),
            granted => {
                lease(&granted);
                return at;
            }
        }
    }
}

fn requests_limit(fx: &mut Fx, ms: u64) -> (f64, LimitSource) {
    let st = fx.key_status("k", ms);
    let b = &bucket_of(&st, Dimension::Requests).bucket;
    (b.limit, b.source)
}

#[test]
fn refusals_during_a_fault_cut_once_and_the_limit_is_back_soon_after_it() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 1200.0, 20.0)]),
    )])
    .filled();
    // Clients failed open while the daemon was away: 10 s in which the provider's refusals
    // are of requests this limiter never saw.
    let now = fx.now(0);
    fx.e.note_fault(None, now.mono + Duration::from_secs(20), now);
    let last = refuse_at(&mut fx, &[1000, 2000, 3000, 4000, 5000]);
    assert!(last < 20_000, "{last}");
    let (limit, source) = requests_limit(&mut fx, last);
    assert_eq!(source, LimitSource::Aimd);
    assert!((limit - 1020.0).abs() < 1e-6, "one cut of 15 %: {limit}");
    // Past the fault and a clean interval, the next request finds the configured limit.
    let clean = 20_000 + bucket::aimd::FAULT_CLEAN.as_millis() as u64;
    let at = asked_at(&mut fx, clean);
    assert_eq!(requests_limit(&mut fx, at), (1200.0, LimitSource::Config));
}

#[test]
fn the_same_refusals_without_a_fault_cut_each_time_and_creep_back() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 1200.0, 20.0)]),
    )])
    .filled();
    let last = refuse_at(&mut fx, &[1000, 2000, 3000, 4000, 5000]);
    let (limit, _) = requests_limit(&mut fx, last);
    assert!(limit < 1020.0 * 0.85, "cut again and again: {limit}");
    let clean = 20_000 + bucket::aimd::FAULT_CLEAN.as_millis() as u64;
    let at = asked_at(&mut fx, clean);
    let (after, source) = requests_limit(&mut fx, at);
    assert_eq!(source, LimitSource::Aimd, "still probing: {after}");
}

#[test]
fn a_cut_just_before_a_fault_became_known_is_the_faults() {
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 1200.0, 20.0)]),
    )])
    .filled();
    // A fleet host learns a moment after the refusals that another went silent.
    refuse_at(&mut fx, &[1000]);
    let now = fx.now(2000);
    fx.e.note_fault(Some("k"), now.mono + Duration::from_secs(8), now);
    let last = refuse_at(&mut fx, &[2500, 3500]);
    assert!(last < 10_000, "{last}");
    let (limit, _) = requests_limit(&mut fx, last);
    assert!((limit - 1020.0).abs() < 1e-6, "no second cut: {limit}");
    // Asked while the fault lasts, and while it cools down: the answer does not matter, the
    // asking does.
    let _ = fx.acquire("k", 0, 0, 0, 9_900);
    assert_eq!(requests_limit(&mut fx, 9_900).1, LimitSource::Aimd);
    let clean = 10_000.max(last + bucket::aimd::FAULT_CLEAN.as_millis() as u64);
    let _ = fx.acquire("k", 0, 0, 0, clean);
    assert_eq!(
        requests_limit(&mut fx, clean),
        (1200.0, LimitSource::Config)
    );
}

/// A provider that admits at most `allowed` requests in any rolling `window_ms`, refused ones
/// not counted, with no headers and no delay named.
struct RollingProvider {
    allowed: usize,
    window_ms: u64,
    admitted: std::collections::VecDeque<u64>,
    /// A refused request takes a place in the window too (as many providers count them).
    counts_refused: bool,
}

impl RollingProvider {
    fn admit(&mut self, ms: u64) -> bool {
        while self
            .admitted
            .front()
            .is_some_and(|&t| ms.saturating_sub(t) >= self.window_ms)
        {
            self.admitted.pop_front();
        }
        if self.admitted.len() >= self.allowed {
            if self.counts_refused {
                self.admitted.push_back(ms);
            }
            return false;
        }
        self.admitted.push_back(ms);
        true
    }
}

/// What a model provider answers a request sent at a ms with so many of its requests in flight
/// (the one sent not counted).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    Ok,
    /// A 429 that names no delay.
    Refused,
    /// A 429 for too many requests in flight.
    TooMany,
}

/// How each answer's report reaches the daemon: `lag` ms after the answer reached its caller,
/// saying when that was (`stamped`) or not.
#[derive(Clone, Copy)]
struct Reports {
    lag: u64,
    stamped: bool,
}

/// Reports sent as each answer comes.
const AT_ONCE: Reports = Reports {
    lag: 0,
    stamped: false,
};

/// `jobs` one-shot jobs at once on key `h` with no config, each refused job asking again once
/// its report is in (the daemon's advice is its wait), each answer back `latency(ms)` after it
/// was sent. When the last job was answered, and when each refusal was sent.
fn one_shot_jobs(
    jobs: usize,
    reports: Reports,
    mut admit: impl FnMut(u64, usize) -> Answer,
    mut latency: impl FnMut() -> u64,
) -> (u64, Vec<u64>) {
    let mut fx = Fx::new(vec![]);
    let mut finished = vec![false; jobs];
    // (answered at, job, lease, answer); the report of each is in `reports.lag` ms later.
    let mut flights: Vec<(u64, usize, String, Answer)> = Vec::new();
    let mut done = 0;
    let mut end = 0;
    let mut refused = Vec::new();
    for ms in 0..60_000u64 {
        flights.sort_by_key(|f| f.0);
        while flights.first().is_some_and(|f| f.0 + reports.lag <= ms) {
            let (answered, job, lease_id, answer) = flights.remove(0);
            let mut o = match answer {
                Answer::Ok => ok(200),
                Answer::Refused => refused_naming_nothing(T0_UNIX + answered as i64),
                Answer::TooMany => refused_for_concurrency(),
            };
            if reports.stamped {
                o.answered_unix_ms = T0_UNIX + answered as i64;
            }
            fx.e.report(&lease_id, &o, fx.now(ms)).expect("report");
            if answer == Answer::Ok {
                finished[job] = true;
                done += 1;
                end = end.max(answered);
                if done == jobs {
                    return (end, refused);
                }
            }
        }
        let idle: Vec<usize> = (0..jobs)
            .filter(|&j| !finished[j] && !flights.iter().any(|f| f.1 == j))
            .collect();
        for job in idle {
            let got = fx.e.acquire(
                &AcquireRequest {
                    key: "h".into(),
                    ..Default::default()
                },
                fx.now(ms),
            );
            match got {
                Ok(Acquired::Granted(g)) => {
                    let serving = flights.iter().filter(|f| f.3 == Answer::Ok).count();
                    let answer = admit(ms, serving);
                    if answer != Answer::Ok {
                        refused.push(ms);
                    }
                    let back = if answer == Answer::Ok { latency() } else { 1 };
                    flights.push((ms + back, job, g.lease_id, answer));
                }
                Ok(Acquired::Queued(w)) => {
                    fx.e.cancel(w, fx.now(ms));
                    break;
                }
                _ => break,
            }
        }
    }
    panic!("the jobs did not finish in 60 s: {done} of {jobs} done, refused at {refused:?}");
}

/// 40 jobs at once on a provider that admits 10 in any rolling second (no headers, no delay
/// named), answers after 50 ms.
fn cold_herd(reports: Reports) -> (u64, Vec<u64>) {
    cold_herd_on(reports, false)
}

/// `cold_herd`, on a provider whose window counts the requests it refused when
/// `counts_refused`.
fn cold_herd_on(reports: Reports, counts_refused: bool) -> (u64, Vec<u64>) {
    let mut window = RollingProvider {
        allowed: 10,
        window_ms: 1000,
        admitted: Default::default(),
        counts_refused,
    };
    one_shot_jobs(
        40,
        reports,
        |ms, _| {
            if window.admit(ms) {
                Answer::Ok
            } else {
                Answer::Refused
            }
        },
        || 50,
    )
}

#[test]
fn a_cold_herd_on_a_rolling_window_ends_near_its_ideal() {
    // 40 at once, 10 in any rolling second (no headers, no delay named), answers after 50 ms:
    // the ideal is 10 at 0, 1, 2 and 3 s, the last answered at 3.05 s. Each place in the window
    // frees a second after its answer (not a second and a margin after its grant): 1.22x, the
    // rest slow start's first 0.5 s (0.6 s and 3.84 s when it began at 4 a second).
    let (end, refused) = cold_herd(AT_ONCE);
    eprintln!(
        "herd: done at {end} ms, {} refused at {refused:?}",
        refused.len()
    );
    assert!(
        end <= 3_760,
        "done at {end} ms (ideal 3050), refused at {refused:?}"
    );
    assert!(
        refused.len() <= 5,
        "{} refused at {refused:?}",
        refused.len()
    );
}

#[test]
fn a_cold_herd_on_a_window_that_counts_its_refusals_is_refused_once() {
    // The herd of `a_cold_herd_on_a_rolling_window_ends_near_its_ideal`, on a provider whose
    // window also counts the requests it refused: the refused request keeps its place in the
    // window held here until a second after its answer, so the second that replays the first
    // is not refused for it, nor the next for that refusal.
    let (end, refused) = cold_herd_on(AT_ONCE, true);
    eprintln!(
        "herd on a window counting refusals: done at {end} ms, {} refused at {refused:?}",
        refused.len()
    );
    assert_eq!(refused.len(), 1, "refused at {refused:?}");
    assert!(
        end <= 3_760,
        "done at {end} ms (ideal 3050), refused at {refused:?}"
    );
}

#[test]
fn a_report_saying_when_its_answer_came_frees_the_window_as_soon_as_one_without_lag() {
    // Reports that reach the daemon 40 ms after their answers (a busy caller) but say when the
    // answers came: each place frees a second after the answer, as with reports at once.
    let (at_once, _) = cold_herd(AT_ONCE);
    let late = Reports {
        lag: 40,
        stamped: false,
    };
    let (unstamped, _) = cold_herd(late);
    let (stamped, refused) = cold_herd(Reports {
        stamped: true,
        ..late
    });
    eprintln!("herd: at once {at_once} ms, late {unstamped} ms, late and stamped {stamped} ms");
    assert!(
        unstamped >= at_once + 80,
        "a late report delays each of the three waves after the first: {unstamped} vs {at_once}"
    );
    assert!(
        stamped <= at_once + 40,
        "done at {stamped} ms with reports 40 ms late, {at_once} ms with reports at once; \
         refused at {refused:?}"
    );
}

#[test]
fn a_server_of_eight_in_flight_is_kept_full_from_a_cold_start() {
    // 300 jobs at once on a server that takes 8 in flight (no headers), answers after 150 to
    // 450 ms: the ideal is their time over 8 slots, 11.25 s.
    let mut rng = fastrand::Rng::with_seed(7);
    let (end, refused) = one_shot_jobs(
        300,
        AT_ONCE,
        |_, serving| {
            if serving >= 8 {
                Answer::TooMany
            } else {
                Answer::Ok
            }
        },
        || 150 + rng.u64(0..300),
    );
    eprintln!(
        "in flight: done at {end} ms, {} refused at {refused:?}",
        refused.len()
    );
    assert!(
        end * 9 <= 11_250 * 10,
        "done at {end} ms (ideal 11250), refused at {refused:?}"
    );
}

#[test]
fn refusals_answered_out_of_order_leave_a_windows_allowance_at_what_the_provider_took() {
    // A key nothing is known of, asked without pause: its slow start sends 13 in the first
    // 0.6 s into a provider that takes 10 in any rolling second and names no delay. The last
    // three are refused, and (a busy caller) the last one sent is reported first: its
    // window's count takes the two sent before it, not yet known refused, as taken (12). Once
    // they are reported refused too, the window allows the 10 the provider took.
    let mut fx = Fx::new(vec![]);
    let mut leases = Vec::new();
    let mut ms = 0;
    while leases.len() < 13 {
        match fx.acquire("k", 0, 0, 0, ms) {
            Acquired::Granted(g) => leases.push((ms, g.lease_id)),
            _ => ms += 1,
        }
        assert!(ms < 2_000, "13 grants took {ms} ms");
    }
    let refused = leases.split_off(10);
    assert!(
        ms - leases[0].0 < 1_000,
        "the 13 went within a second: {ms} ms"
    );
    for (at, l) in &leases {
        fx.e.report(l, &ok(200), fx.now(at + 50)).expect("report");
    }
    let answered = ms + 50;
    for (_, l) in refused.iter().rev() {
        let o = refused_naming_nothing(T0_UNIX + answered as i64);
        fx.e.report(l, &o, fx.now(answered)).expect("report");
    }
    let (limit, source) = requests_limit(&mut fx, answered);
    assert_eq!(source, LimitSource::Aimd);
    assert_eq!(
        limit, 600.0,
        "a window of 10 a second, not of the 12 counted at the first refusal"
    );
}

#[test]
fn a_header_less_limit_that_counts_refusals_is_measured_at_it_after_the_first_cuts() {
    // 20 requests/s with a burst of 5, refused requests counted, the delay in retry-after-ms,
    // no headers, 96 workers, answers after 50 ms: a refusal soon after a cut measures the
    // limit by what the provider took since the cut, the requests it refused meanwhile with
    // those it accepted (it counted them): not by those it accepted alone, which held the rate
    // at four fifths of the limit for as long as the creep took to find it again.
    let mut provider = ModelProvider::full(20.0, 5.0, true);
    let run = drive(&mut provider, 96, 50, 15_000, refused_after_ms);
    let accepted = (run.sent.len() - run.refused.len()) as f64;
    let allowed = 5.0 + 20.0 * 15.0;
    assert!(
        accepted >= 0.9 * allowed,
        "{accepted} accepted in 15 s of the {allowed} allowed; refused at {:?}",
        run.refused
    );
}

/// A generous provider's answer: limit headers far above what a gateway before it allows.
fn generous(unix_ms: i64) -> Outcome {
    let mut o = with_headers(
        200,
        &[
            ("x-ratelimit-limit-requests", "60000"),
            ("x-ratelimit-remaining-requests", "59990"),
            ("x-ratelimit-reset-requests", "10ms"),
        ],
        unix_ms,
    );
    o.usage_known = true;
    o
}

/// A gateway's 429 (nginx's `limit_req` or `limit_conn`): an HTML page, no headers, no delay.
fn gateway_refusal(unix_ms: i64) -> Outcome {
    let mut o = with_headers(429, &[], unix_ms);
    o.error_message = "429 Too Many Requests".into();
    o
}

#[test]
fn a_gateway_beneath_generous_headers_is_learned_as_a_limit_of_its_own() {
    // nginx's limit_req (20/s, a burst of 5, refused requests not counted) in front of a
    // provider whose headers say 60,000 a minute with nearly all of it left: 96 workers,
    // answers after 150 to 450 ms, refusals at once. The refusals the headers did not predict are a
    // limit in between, learned beneath them; believing the headers refused more than half.
    let mut gateway = ModelProvider::full(20.0, 5.0, false);
    let (run, mut fx) = drive_through(
        96,
        Latency {
            answer: 150,
            spread: 300,
            refusal: 1,
        },
        40_000,
        |ms, _| gateway.admit(ms),
        |admitted, unix_ms| match admitted {
            Ok(()) => generous(unix_ms),
            Err(_) => gateway_refusal(unix_ms),
        },
    );
    let after = Run::after;
    let share = after(&run.refused, 0) / after(&run.sent, 0);
    assert!(
        share <= 0.03,
        "{} of {} refused: {:?}",
        run.refused.len(),
        run.sent.len(),
        run.refused
    );
    let accepted = after(&run.sent, 10_000) - after(&run.refused, 10_000);
    // (0.875 of it on this model, 0.7 to 0.9 behind nginx: short of the 0.9 sought.)
    assert!(
        accepted / 30.0 >= 17.0,
        "{:.1} accepted per second",
        accepted / 30.0
    );
    // Shown as what it is: a limit found by probing, beneath the headers' limit, which is
    // still read. (A concurrency may be inferred beside it, at about its rate times the
    // answers' latency, where both explain the refusals.)
    let st = fx.key_status("h", 40_000);
    let b = bucket_of(&st, Dimension::Requests);
    assert_eq!(b.bucket.source, LimitSource::Aimd);
    assert!(b.beneath_headers, "{b:?}");
    assert_eq!(b.headers_limit, Some(60_000.0));
    assert!(b.bucket.limit <= 1_500.0, "{b:?}");
}

#[test]
fn a_refusal_the_headers_predicted_is_no_limit_in_between() {
    // The provider's own 429 says nothing remains: the headers' limit is what refused, and
    // nothing is learned beneath it.
    let mut fx = Fx::new(vec![]);
    report(&mut fx, "p", 200, &requests_headers("600", "3", "10ms"), 0);
    report(
        &mut fx,
        "p",
        429,
        &requests_headers("600", "0", "100ms"),
        10,
    );
    let b = bucket_of(&fx.key_status("p", 20), Dimension::Requests);
    assert!(!b.beneath_headers, "{b:?}");
    // The same refusal with room left in the headers is one they did not predict.
    let mut fx = Fx::new(vec![]);
    report(
        &mut fx,
        "g",
        200,
        &requests_headers("600", "500", "10ms"),
        0,
    );
    report(
        &mut fx,
        "g",
        429,
        &requests_headers("600", "490", "10ms"),
        10,
    );
    let b = bucket_of(&fx.key_status("g", 20), Dimension::Requests);
    assert!(b.beneath_headers, "{b:?}");
    assert_eq!(b.bucket.source, LimitSource::Aimd);
    // With no headers on the refusal, the last ones less what went since decide: a request
    // larger than the burst they describe went from a full bucket into debt, so its refusal
    // was theirs to predict.
    let mut fx = Fx::new(vec![]);
    let tokens = [
        ("x-ratelimit-limit-tokens", "60000".to_string()),
        ("x-ratelimit-remaining-tokens", "1000".to_string()),
        ("x-ratelimit-reset-tokens", "0s".to_string()),
    ];
    report(&mut fx, "q", 200, &tokens, 0);
    let big = lease(&fx.acquire("q", 1_500, 0, 60_000, 10));
    fx.e.report(&big, &gateway_refusal(T0_UNIX + 20), fx.now(20))
        .expect("report");
    let st = fx.key_status("q", 30);
    assert!(st.buckets.iter().all(|b| !b.beneath_headers), "{st:?}");
}

#[test]
fn refusals_that_track_requests_in_flight_are_a_concurrency_limit_not_a_rate() {
    // nginx's limit_conn 8 with nothing in its 429 to say so, with and without the provider's
    // generous headers behind it: answers after 200 to 400 ms (so in flight and rate part),
    // 96 workers. What is learned is 8 in flight, and the rate is left alone.
    for headers in [true, false] {
        let mut n = 0u64;
        let (run, mut fx) = drive_through(
            96,
            Latency {
                answer: 200,
                spread: 200,
                refusal: 1,
            },
            30_000,
            |_, in_flight| if in_flight >= 8 { Err(0) } else { Ok(()) },
            |admitted, unix_ms| match admitted {
                Ok(()) if headers => generous(unix_ms),
                Ok(()) => ok(200),
                Err(_) => gateway_refusal(unix_ms),
            },
        );
        n += run.refused.len() as u64;
        let st = fx.key_status("h", 30_000);
        assert_eq!(st.max_concurrency, 8, "headers {headers}: {st:?}");
        let accepted = Run::after(&run.sent, 5_000) - Run::after(&run.refused, 5_000);
        // 8 in flight for 300 ms each on average: 26.7 a second.
        assert!(
            accepted / 25.0 >= 24.0,
            "headers {headers}: {:.1} accepted per second",
            accepted / 25.0
        );
        assert!(n <= 10, "headers {headers}: {n} refused: {:?}", run.refused);
    }
}

#[test]
fn a_crowd_waiting_at_the_first_answer_goes_as_slow_start_reaches_the_headers_then_at_once() {
    // 20 callers at once on a key nothing is known of: slow start's first 4 go. The first
    // answer names 600 a minute with 50 left. With 16 waiting, the crowd is not released at
    // once (a gateway in between would refuse most of it): slow start goes on beneath the
    // headers, and once it reaches their limit, what they say is left goes at once.
    let mut fx = Fx::new(vec![]);
    let mut first = Vec::new();
    let mut waiting = Vec::new();
    for _ in 0..20 {
        match fx.acquire("c", 0, 0, 10_000, 0) {
            Acquired::Granted(g) => first.push(g.lease_id),
            Acquired::Queued(w) => waiting.push(w),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(first.len(), bucket::aimd::START_BURST as usize);
    let h = requests_headers("600", "50", "10s");
    let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut o = with_headers(200, &h, T0_UNIX + 50);
    o.usage_known = true;
    fx.e.report(&first[0], &o, fx.now(50)).expect("report");
    let released_at_once = granted_ids(&fx.e.drain_answers()).len();
    let b = bucket_of(&fx.key_status("c", 50), Dimension::Requests);
    assert_eq!(b.bucket.source, LimitSource::Aimd, "{b:?}");
    assert!(
        released_at_once <= 2,
        "{released_at_once} released at the first answer"
    );
    // Slow start doubles past 10 a second at its next step: the headers rule, and the rest go.
    let mut granted = released_at_once;
    for ms in (60..=400).step_by(10) {
        fx.e.pump(fx.now(ms));
        granted += granted_ids(&fx.e.drain_answers()).len();
    }
    let b = bucket_of(&fx.key_status("c", 400), Dimension::Requests);
    assert_eq!(
        (b.bucket.limit, b.bucket.source),
        (600.0, LimitSource::Headers)
    );
    assert_eq!(
        granted,
        waiting.len(),
        "the crowd went once slow start ended"
    );
}
