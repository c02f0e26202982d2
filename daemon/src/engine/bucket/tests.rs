//! One bucket on a fake clock: refill, readings from headers, probing after 429s.

use super::headers::Samples;
use super::*;
use crate::engine::headers::HeaderLimit;

fn reading(limit: f64, remaining: f64, reset_ms: u64) -> HeaderLimit {
    HeaderLimit {
        limit: Some(limit),
        remaining: Some(remaining),
        reset: Some(Duration::from_millis(reset_ms)),
        reset_granularity: Duration::from_millis(1),
    }
}

#[test]
fn samples_take_the_least_then_the_median() {
    let mut s = Samples::default();
    assert_eq!(s.estimate(), None);
    s.push(9.0);
    s.push(5.0);
    assert_eq!(s.estimate(), Some(5.0));
    s.push(100.0);
    s.push(6.0);
    s.push(5.5);
    assert_eq!(s.estimate(), Some(6.0));
}

#[test]
fn capacity_is_remaining_plus_refill_until_reset() {
    let t = Instant::now();
    let mut b = Bucket::learned(Dimension::Requests, t);
    // 1200/min is 20/s: 2 left and full again in 150 ms means a bucket of 5.
    assert!(b.read_headers(&reading(1200.0, 2.0, 150), t));
    assert_eq!(b.rate.limit, 1200.0);
    assert!((b.rate.capacity - 5.0).abs() < 0.05, "{}", b.rate.capacity);
    assert_eq!(b.capacity_source, LimitSource::Headers);
    assert!(!b.capacity_is_configured());
}

#[test]
fn whole_second_resets_are_read_short() {
    let t = Instant::now();
    let mut b = Bucket::learned(Dimension::Requests, t);
    let mut hl = reading(1200.0, 3.0, 1000);
    hl.reset_granularity = Duration::from_secs(1);
    b.read_headers(&hl, t);
    // The true reset is somewhere in [1 s, 2 s): only the remaining is sure.
    assert_eq!(b.rate.capacity, 3.0);
}

#[test]
fn aimd_cuts_then_approaches_then_creeps() {
    let t = Instant::now();
    let mut b = Bucket::learned(Dimension::Requests, t);
    let refusal = |granted_at| ProviderRefusal {
        granted_at,
        cooling_until: t,
        granted: 1200.0,
        accepted: Some(1200.0),
        since_cut: None,
        last_window: None,
        fault_until: None,
        beneath: false,
    };
    assert_eq!(b.refused(refusal(t), t), Some(f64::INFINITY));
    assert_eq!(b.source, LimitSource::Aimd);
    assert!((b.rate.limit - 1020.0).abs() < 1e-9);
    // A refusal of a request already in flight at the cut does not cut again.
    assert_eq!(b.refused(refusal(t), t + Duration::from_millis(10)), None);
    // No demand, no rise.
    assert!(!b.step(t + aimd::STEP));
    let mut now = t + aimd::STEP;
    let mut last = b.rate.limit;
    for _ in 0..10 {
        now += aimd::STEP;
        b.on_short();
        b.step(now);
        assert!(b.rate.limit > last, "rises with demand");
        assert!(
            b.rate.limit <= 1200.0 * aimd::APPROACH + 1e-9
                || last >= 1200.0 * aimd::APPROACH - 1e-9
        );
        last = b.rate.limit;
    }
    // Back to just under the refused rate within a few steps, then creeping.
    assert!(
        b.rate.limit >= 1200.0 * aimd::APPROACH - 1e-9 && b.rate.limit < 1200.0,
        "{}",
        b.rate.limit
    );
}

#[test]
fn a_bucket_short_by_a_hair_is_not_ready_now() {
    // 60,000 a minute: a thousandth of a token comes back in a microsecond.
    let now = Instant::now();
    let rate = Rate {
        dimension: Dimension::Tokens,
        period: Period::Minute,
        limit: 60_000.0,
        capacity: 1000.0,
    };
    let mut b = Bucket::configured(rate, now);
    // Short by less than a nanosecond of refill: still short, so not ready at `now`.
    b.level = 1.0 - 1e-12;
    assert!(b.level < b.required(1.0));
    assert!(b.ready_at(1.0) > now, "ready at once while short");
    b.level = 1.0;
    assert_eq!(b.ready_at(1.0), now);
    b.level = 0.0;
    assert_eq!(b.ready_at(1.0), now + Duration::from_millis(1));
}

#[test]
fn a_fault_cuts_once_and_what_it_left_is_refused_without_a_cut_until_a_clean_interval() {
    let t = Instant::now();
    let ms = |n: u64| t + Duration::from_millis(n);
    let mut b = Bucket::configured(
        Rate {
            dimension: Dimension::Requests,
            period: Period::Minute,
            limit: 1200.0,
            capacity: 20.0,
        },
        t,
    );
    let refusal = |at: Instant, fault_until: Option<Instant>| ProviderRefusal {
        granted_at: at,
        cooling_until: at,
        granted: 1200.0,
        accepted: None,
        since_cut: None,
        last_window: None,
        fault_until,
        beneath: false,
    };
    assert!(b.refused(refusal(ms(0), Some(ms(5000))), ms(0)).is_some());
    assert!((b.rate.limit - 1020.0).abs() < 1e-9);
    // In the fault, past the hold: no second cut.
    assert!(b
        .refused(refusal(ms(1000), Some(ms(5000))), ms(1000))
        .is_none());
    // Just after it: what it left, still no cut...
    assert!(b.refused(refusal(ms(5500), None), ms(5500)).is_none());
    assert!((b.rate.limit - 1020.0).abs() < 1e-9);
    // ...and not back before a clean interval...
    assert!(!b.fault_over(ms(6000)));
    assert_eq!(b.source, LimitSource::Aimd);
    // ...then back at the configured limit.
    let clean = 5500 + aimd::FAULT_CLEAN.as_millis() as u64;
    assert!(b.fault_over(ms(clean)));
    assert_eq!((b.rate.limit, b.source), (1200.0, LimitSource::Config));
    // A refusal after that is the provider's news: it cuts.
    assert!(b
        .refused(refusal(ms(clean + 100), None), ms(clean + 100))
        .is_some());
}

#[test]
fn a_refusal_soon_after_a_cut_finds_the_limit_from_what_was_accepted_between() {
    // Refused at 960 a minute, then again at 816, 1.5 s later: the provider accepted 500 a
    // minute between the two refusals (its burst spent at both), so its limit is at most
    // 500 x 1.1, and the rate comes down to just under that, not 15 % lower each time.
    let t = Instant::now();
    let ms = |n| t + Duration::from_millis(n);
    let mut b = Bucket::learned(Dimension::Requests, t);
    let refusal = |at, accepted, since_cut| ProviderRefusal {
        granted_at: at,
        cooling_until: at,
        granted: 960.0,
        accepted: Some(accepted),
        since_cut,
        last_window: None,
        fault_until: None,
        beneath: false,
    };
    assert!(b.refused(refusal(ms(0), 960.0, None), ms(0)).is_some());
    assert!((b.rate.limit - 816.0).abs() < 1e-9);
    let before = b.rate.limit;
    assert!(b
        .refused(refusal(ms(1500), 840.0, Some(500.0)), ms(1500))
        .is_some());
    let bound = 500.0 * aimd::SINCE_CUT_SLACK;
    assert!(
        (b.rate.limit - bound * aimd::APPROACH).abs() < 1e-6,
        "{} after {before}",
        b.rate.limit
    );
    // Without that measure: the usual cut of 15 %.
    let mut b = Bucket::learned(Dimension::Requests, t);
    assert!(b.refused(refusal(ms(0), 960.0, None), ms(0)).is_some());
    assert!(b
        .refused(refusal(ms(1500), 840.0, None), ms(1500))
        .is_some());
    assert!((b.rate.limit - 816.0 * aimd::CUT).abs() < 1e-6);
}

#[test]
fn on_a_line_a_request_larger_than_the_burst_goes_on_the_unit_given_for_it() {
    // Tokens: 1,000 a second and a burst of 1,000, as the headers say (a probe's cut leaves a
    // bucket this small too). The line sizes each unit by the request it is for: one of 1,500
    // tokens is whole once valid, never cut to the burst (or its request could never go, and
    // the host would ask on and on for units it cuts away).
    let t = Instant::now();
    let at = |ms: u64| t + Duration::from_millis(ms);
    let mut b = Bucket::learned(Dimension::Tokens, t);
    assert!(b.read_headers(&reading(60_000.0, 0.0, 1_000), t));
    assert!(
        (b.rate.capacity - 1_000.0).abs() < 5.0,
        "{}",
        b.rate.capacity
    );
    b.set_line(true, t);
    b.add_units(&[(at(100), 1_500.0)], t);
    b.refill(at(100));
    b.refill(at(150));
    assert!(b.has(1_500.0), "holds {}", b.level);
    b.take(1_500.0, Duration::ZERO, at(150));
    // What it holds after is a burst at most, as ever.
    b.add_units(&[(at(200), 800.0), (at(200), 800.0)], at(150));
    b.refill(at(250));
    assert!(b.level <= 1_000.0, "holds {}", b.level);
}
