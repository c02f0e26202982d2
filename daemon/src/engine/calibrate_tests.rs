//! Limits that calibrate themselves from headers, on the fake clock: limits, capacity, absurd
//! values, output accounting. (Limits found without headers: probe_tests.)

use super::tests::*;
use super::*;

pub(super) fn bucket_of(st: &KeyStatus, dim: Dimension) -> BucketStatus {
    st.buckets
        .iter()
        .find(|b| b.bucket.dimension == dim)
        .cloned()
        .unwrap_or_else(|| panic!("no {dim} bucket in {st:?}"))
}

pub(super) fn requests_headers(
    limit: &str,
    remaining: &str,
    reset: &str,
) -> Vec<(&'static str, String)> {
    vec![
        ("x-ratelimit-limit-requests", limit.to_string()),
        ("x-ratelimit-remaining-requests", remaining.to_string()),
        ("x-ratelimit-reset-requests", reset.to_string()),
    ]
}

pub(super) fn report(fx: &mut Fx, key: &str, status: u16, headers: &[(&str, String)], ms: u64) {
    let lease_id = lease(&fx.acquire(key, 0, 0, 60_000, ms));
    let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut o = with_headers(status, &h, T0_UNIX + ms as i64);
    o.usage_known = status == 200;
    fx.e.report(&lease_id, &o, fx.now(ms)).expect("report");
}

#[test]
fn a_limit_header_lowers_the_configured_limit_and_never_raises_it() {
    let mut fx = Fx::new(vec![(
        "o",
        limits(vec![rate(Dimension::Requests, 600.0, 10.0)]),
    )])
    .filled();
    report(&mut fx, "o", 200, &requests_headers("300", "4", "0s"), 0);
    let b = bucket_of(&fx.key_status("o", 0), Dimension::Requests);
    assert_eq!(
        (b.bucket.limit, b.bucket.source),
        (300.0, LimitSource::Headers)
    );
    assert_eq!(b.configured_limit, Some(600.0));
    assert_eq!(
        (b.learned_limit, b.learned_source),
        (Some(300.0), Some(LimitSource::Headers))
    );
    // The provider's tier goes up: the config stays the bound the user chose.
    report(&mut fx, "o", 200, &requests_headers("1200", "4", "0s"), 10);
    let b = bucket_of(&fx.key_status("o", 10), Dimension::Requests);
    assert_eq!(
        (b.bucket.limit, b.bucket.source),
        (600.0, LimitSource::Config)
    );
    assert_eq!(b.learned_limit, Some(1200.0));
}

#[test]
fn a_learned_limit_follows_the_headers_both_ways() {
    let mut fx = Fx::new(vec![]);
    report(&mut fx, "n", 200, &requests_headers("1200", "5", "0s"), 0);
    let b = bucket_of(&fx.key_status("n", 0), Dimension::Requests);
    assert_eq!(
        (b.bucket.limit, b.bucket.source),
        (1200.0, LimitSource::Headers)
    );
    assert_eq!(b.configured_limit, None);
    report(&mut fx, "n", 200, &requests_headers("600", "5", "0s"), 10);
    assert_eq!(
        bucket_of(&fx.key_status("n", 10), Dimension::Requests)
            .bucket
            .limit,
        600.0
    );
    report(&mut fx, "n", 200, &requests_headers("2400", "5", "0s"), 20);
    assert_eq!(
        bucket_of(&fx.key_status("n", 20), Dimension::Requests)
            .bucket
            .limit,
        2400.0
    );
}

#[test]
fn capacity_comes_from_remaining_and_reset_not_one_second_of_rate() {
    let mut fx = Fx::new(vec![]);
    // 1200/min is 20/s: 2 left and full in 150 ms means a bucket of 5, not 20.
    for (i, rem) in ["2", "3", "1"].iter().enumerate() {
        let reset = format!("{}ms", (5 - rem.parse::<u64>().expect("n")) * 50);
        report(
            &mut fx,
            "o",
            200,
            &requests_headers("1200", rem, &reset),
            i as u64 * 1000,
        );
    }
    let b = bucket_of(&fx.key_status("o", 3000), Dimension::Requests);
    assert!(
        (b.bucket.capacity - 5.0).abs() < 0.05,
        "capacity {}",
        b.bucket.capacity
    );
    assert_eq!(b.capacity_source, LimitSource::Headers);

    // Anthropic: an RFC 3339 reset in whole seconds, read a second short.
    let mut fx = Fx::new(vec![]);
    let at = |ms: i64| llmctl_rfc3339_seconds(T0_UNIX + ms);
    let h = vec![
        ("anthropic-ratelimit-tokens-limit", "60000".to_string()),
        ("anthropic-ratelimit-tokens-remaining", "2000".to_string()),
        ("anthropic-ratelimit-tokens-reset", at(3000)),
    ];
    report(&mut fx, "a", 200, &h, 0);
    let b = bucket_of(&fx.key_status("a", 0), Dimension::Tokens);
    // 1000/s: 2000 left, full in 2 to 3 s: at least 4000.
    assert!(
        (b.bucket.capacity - 4000.0).abs() < 1.0,
        "capacity {}",
        b.bucket.capacity
    );
}

/// RFC 3339 with whole seconds, as Anthropic writes its resets.
fn llmctl_rfc3339_seconds(unix_ms: i64) -> String {
    jiff::Timestamp::from_second(unix_ms.div_euclid(1000))
        .expect("a time within jiff's range")
        .to_string()
}

#[test]
fn a_learned_capacity_never_refuses_a_request_as_too_large() {
    let mut fx = Fx::new(vec![]);
    let h = vec![
        ("x-ratelimit-limit-tokens", "60000".to_string()),
        ("x-ratelimit-remaining-tokens", "500".to_string()),
        ("x-ratelimit-reset-tokens", "500ms".to_string()),
    ];
    report(&mut fx, "t", 200, &h, 0);
    let b = bucket_of(&fx.key_status("t", 0), Dimension::Tokens);
    assert!(b.bucket.capacity < 1100.0, "capacity {}", b.bucket.capacity);
    // 3000 tokens is above that guess: it waits for a full bucket instead of failing.
    assert!(matches!(
        fx.e.acquire(
            &AcquireRequest {
                key: "t".into(),
                input_tokens: 3000,
                max_wait: Duration::from_secs(10),
                ..Default::default()
            },
            fx.now(1),
        ),
        Ok(Acquired::Queued(_) | Acquired::Granted(_))
    ));
}

#[test]
fn azures_unknown_limits_minus_one_and_zero_set_no_limit() {
    // Azure's Responses API has been seen answering with -1 for what it does not know.
    let mut fx = Fx::new(vec![]);
    report(
        &mut fx,
        "az",
        200,
        &[
            ("x-ratelimit-limit-tokens", "-1".into()),
            ("x-ratelimit-remaining-tokens", "-1".into()),
            ("x-ratelimit-reset-tokens", "0".into()),
        ],
        0,
    );
    let st = fx.key_status("az", 0);
    assert!(
        st.buckets
            .iter()
            .all(|b| b.bucket.source != LimitSource::Headers),
        "{st:?}"
    );
}

#[test]
fn absurd_header_values_are_ignored_and_counted() {
    let mut fx = Fx::new(vec![]);
    report(
        &mut fx,
        "x",
        200,
        &[
            ("x-ratelimit-limit-requests", "0".into()),
            ("x-ratelimit-limit-tokens", "1000".into()),
            ("x-ratelimit-remaining-tokens", "5000".into()),
        ],
        0,
    );
    report(
        &mut fx,
        "x",
        200,
        &[("x-ratelimit-reset-requests", "87600h".into())],
        10,
    );
    let st = fx.key_status("x", 10);
    assert_eq!(st.headers_ignored_total, 3);
    assert!(
        st.buckets
            .iter()
            .all(|b| b.bucket.source != LimitSource::Headers),
        "{st:?}"
    );
}

#[test]
fn output_accounting_from_preset_headers_or_config() {
    let keyed = |provider, explicit| KeyLimits {
        rates: vec![rate(Dimension::Tokens, 600_000.0, 100_000.0)],
        provider,
        output_counted_as: explicit,
        ..KeyLimits::default()
    };
    let mut fx = Fx::new(vec![
        ("p/openai", keyed(Some(Provider::Openai), None)),
        (
            "p/explicit",
            keyed(Some(Provider::Openai), Some(OutputCounting::Actual)),
        ),
        ("p/none", keyed(None, None)),
        ("q", keyed(None, None)),
    ])
    .filled();
    let of = |fx: &mut Fx, k: &str| {
        let st = fx.key_status(k, 0);
        (st.output_counted_as, st.output_counted_as_source)
    };
    assert_eq!(
        of(&mut fx, "p/openai"),
        (OutputCounting::Reserved, AccountingSource::Provider)
    );
    assert_eq!(
        of(&mut fx, "p/explicit"),
        (OutputCounting::Actual, AccountingSource::Config)
    );
    assert_eq!(
        of(&mut fx, "p/none"),
        (OutputCounting::Actual, AccountingSource::Default)
    );
    // OpenAI-style headers on p/none: its provider charges max_tokens.
    report(
        &mut fx,
        "p/none",
        200,
        &[("x-ratelimit-remaining-tokens", "90000".into())],
        0,
    );
    assert_eq!(
        of(&mut fx, "p/none"),
        (OutputCounting::Reserved, AccountingSource::Headers)
    );
    // Anthropic-style ones on q: output as produced; and an explicit setting is never moved.
    report(
        &mut fx,
        "q",
        200,
        &[("anthropic-ratelimit-tokens-remaining", "90000".into())],
        0,
    );
    assert_eq!(
        of(&mut fx, "q"),
        (OutputCounting::Actual, AccountingSource::Headers)
    );
    report(
        &mut fx,
        "p/explicit",
        200,
        &[("x-ratelimit-remaining-tokens", "90000".into())],
        0,
    );
    assert_eq!(
        of(&mut fx, "p/explicit"),
        (OutputCounting::Actual, AccountingSource::Config)
    );
    // The inferred accounting settles: max_tokens is not refunded on p/none now.
    let before = fx.level("p/none", Dimension::Tokens, 1);
    let id = lease(&fx.acquire("p/none", 100, 400, 0, 1));
    let mut o = ok(200);
    (o.input_tokens, o.output_tokens) = (100, 50);
    fx.e.report(&id, &o, fx.now(1)).expect("report");
    assert!((before - fx.level("p/none", Dimension::Tokens, 1) - 500.0).abs() < 1.0);
}

#[test]
fn a_configured_burst_still_refuses_what_can_never_fit_when_headers_lower_it() {
    let l = limits(vec![rate(Dimension::Tokens, 60_000.0, 10_000.0)]);
    let mut fx = Fx::new(vec![("c", l)]).filled();
    let h = vec![
        ("x-ratelimit-limit-tokens", "60000".to_string()),
        ("x-ratelimit-remaining-tokens", "4000".to_string()),
        ("x-ratelimit-reset-tokens", "1s".to_string()),
    ];
    report(&mut fx, "c", 200, &h, 0);
    let b = bucket_of(&fx.key_status("c", 0), Dimension::Tokens);
    assert!(b.bucket.capacity < 5100.0, "{}", b.bucket.capacity);
    let ask = |fx: &mut Fx, tokens| {
        fx.e.acquire(
            &AcquireRequest {
                key: "c".into(),
                input_tokens: tokens,
                max_wait: Duration::from_secs(60),
                ..Default::default()
            },
            fx.now(1),
        )
    };
    assert!(matches!(
        ask(&mut fx, 20_000),
        Err(EngineError::NeverFits { .. })
    ));
    // Above the learned capacity but within the configured one: it waits for a full bucket.
    assert!(ask(&mut fx, 8_000).is_ok());
}

#[test]
fn a_lease_granted_before_a_bucket_existed_gives_nothing_back_to_it() {
    let mut fx = Fx::new(vec![]);
    let early = lease(&fx.acquire("u", 5000, 0, 0, 0));
    let h = vec![
        ("x-ratelimit-limit-tokens", "60000".to_string()),
        ("x-ratelimit-remaining-tokens", "100".to_string()),
    ];
    report(&mut fx, "u", 200, &h, 10);
    let before = fx.level("u", Dimension::Tokens, 10);
    let mut o = ok(200);
    o.input_tokens = 0;
    fx.e.report(&early, &o, fx.now(10)).expect("report");
    assert_eq!(fx.level("u", Dimension::Tokens, 10), before);
}

/// Requests against a provider with OpenAI's headers that charges `charge(max, produced)` output
/// tokens, another consumer taking `others` tokens between requests; returns the engine after.
fn openai_headers_charging(charge: fn(u64, u64) -> u64, others: f64) -> Fx {
    let mut fx = Fx::new(vec![]);
    let (limit, per_ms) = (600_000.0, 10.0);
    let mut provider = 100_000.0f64;
    let mut last = 0u64;
    for i in 0..60u64 {
        let ms = 1000 + i * 100;
        provider = (provider + (ms - last) as f64 * per_ms).min(limit) - others;
        last = ms;
        let produced = 20 + (i * 37) % 300;
        let id = lease(&fx.acquire("compat", 100, 400, 60_000, ms));
        provider -= (100 + charge(400, produced)) as f64;
        let remaining = format!("{}", provider.floor());
        let h = [
            ("x-ratelimit-limit-tokens", "600000"),
            ("x-ratelimit-remaining-tokens", remaining.as_str()),
        ];
        let mut o = with_headers(200, &h, T0_UNIX + ms as i64);
        (o.usage_known, o.input_tokens, o.output_tokens) = (true, 100, produced);
        fx.e.report(&id, &o, fx.now(ms)).expect("report");
        if i == 0 {
            let st = fx.key_status("compat", ms);
            assert_eq!(
                (st.output_counted_as, st.output_counted_as_source),
                (OutputCounting::Reserved, AccountingSource::Headers)
            );
        }
    }
    fx
}

#[test]
fn usage_against_remaining_tokens_corrects_what_the_header_family_suggested() {
    // A provider that charges max_tokens, as its headers suggest: confirmed, even with another
    // consumer taking a steady share.
    let mut fx = openai_headers_charging(|max, _| max, 300.0);
    let st = fx.key_status("compat", 8000);
    assert_eq!(
        (st.output_counted_as, st.output_counted_as_source),
        (OutputCounting::Reserved, AccountingSource::Usage)
    );
    // An OpenAI-compatible server that sends OpenAI's headers but charges what is produced.
    let mut fx = openai_headers_charging(|_, produced| produced, 300.0);
    let st = fx.key_status("compat", 5000);
    assert_eq!(
        (st.output_counted_as, st.output_counted_as_source),
        (OutputCounting::Actual, AccountingSource::Usage)
    );
    // The verdict is kept across a restart.
    let snaps = fx.e.snapshot_all(fx.now(5000));
    let mut fresh = Fx::new(vec![]);
    fresh.e.restore(&snaps, &[], fresh.now(0));
    let st = fresh.key_status("compat", 0);
    assert_eq!(
        (st.output_counted_as, st.output_counted_as_source),
        (OutputCounting::Actual, AccountingSource::Usage)
    );
}

#[test]
fn the_first_answer_on_a_new_key_counts_the_requests_sent_after_it() {
    // First contact: the probe's burst goes out before any answer.
    let mut fx = Fx::new(vec![]);
    let first = lease(&fx.acquire("new", 0, 0, 0, 0));
    let mut later = Vec::new();
    while let Acquired::Granted(g) = fx.acquire("new", 0, 0, 0, 0) {
        later.push(g.lease_id);
    }
    assert!(!later.is_empty(), "the first contact sends a few at once");
    // The first answer: 2 a second, 1 of a burst of 2 left when the provider counted it. The
    // others were sent after: they are taken off that 1 as well.
    let h = requests_headers("120", "1", "500ms");
    let hv: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut o = with_headers(200, &hv, T0_UNIX + 100);
    o.usage_known = true;
    fx.e.report(&first, &o, fx.now(100)).expect("report");
    let level = fx.level("new", Dimension::Requests, 100);
    let expected = 1.0 - later.len() as f64;
    assert!(
        (level - expected).abs() < 0.05,
        "level {level}, expected {expected} (1 left less {} in flight)",
        later.len()
    );
    assert!(
        !matches!(fx.acquire("new", 0, 0, 0, 100), Acquired::Granted(_)),
        "nothing more until they are paid for"
    );
}
