//! Engine throughput: one acquire and its settle, on one thread, with 1 and 1,000 keys; and
//! the cost of a grant on a key with a crowd waiting (200 and 10,000 callers), which should not
//! grow with the crowd.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use llmctl_daemon::engine::{
    AcquireRequest, Acquired, Dimension, Engine, EngineConfig, KeyLimits, Now, Outcome, Period,
    Rate, WaiterAnswer,
};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn engine(keys: usize, base: Now) -> (Engine, Vec<AcquireRequest>) {
    let limits = KeyLimits {
        rates: vec![
            Rate::with_default_burst(Dimension::Requests, Period::Minute, 1e12),
            Rate::with_default_burst(Dimension::Tokens, Period::Minute, 1e12),
        ],
        ..KeyLimits::default()
    };
    let names: Vec<String> = (0..keys).map(|i| format!("provider/model-{i}")).collect();
    let config = EngineConfig {
        max_keys: keys + 10,
        ..EngineConfig::default()
    };
    let mut e = Engine::new(
        config,
        names.iter().map(|n| (n.clone(), limits.clone())).collect(),
        base,
        1,
    )
    .expect("engine");
    // Let the buckets fill before measuring.
    e.pump(base.after(Duration::from_secs(60)));
    let reqs = names
        .into_iter()
        .map(|key| AcquireRequest {
            key,
            requests: 1,
            input_tokens: 500,
            output_tokens: 200,
            ..AcquireRequest::default()
        })
        .collect();
    (e, reqs)
}

/// A request answered, with its usage.
fn answered() -> Outcome {
    Outcome {
        status: 200,
        input_tokens: 480,
        output_tokens: 150,
        usage_known: true,
        attempt: 1,
        ..Outcome::default()
    }
}

fn acquire_settle(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine acquire+settle");
    group.throughput(Throughput::Elements(1));
    for keys in [1usize, 1000] {
        let base = Now {
            mono: Instant::now(),
            unix_ms: 1_800_000_000_000,
        };
        let (mut e, reqs) = engine(keys, base);
        let outcome = answered();
        let now = base.after(Duration::from_secs(61));
        let mut i = 0usize;
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{keys} keys")),
            &keys,
            |b, _| {
                b.iter(|| {
                    let req = &reqs[i % reqs.len()];
                    i = i.wrapping_add(1);
                    match e.acquire(black_box(req), now) {
                        Ok(Acquired::Granted(g)) => {
                            black_box(e.report(&g.lease_id, &outcome, now).expect("report"));
                        }
                        other => panic!("not granted: {other:?}"),
                    }
                })
            },
        );
    }
    group.finish();
}

/// One key at 500 requests a second with `waiting` callers queued on it. Each iteration is what
/// the daemon does for one grant: time moves on by one request's refill (2 ms), the queue is
/// pumped (one grant), the grant is settled, a new caller queues behind the crowd (so it stays
/// the same size), and the next wake-up is asked for.
fn crowd_grant(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine grant with a crowd waiting");
    group.throughput(Throughput::Elements(1));
    for waiting in [200usize, 10_000] {
        let base = Now {
            mono: Instant::now(),
            unix_ms: 1_800_000_000_000,
        };
        let limits = KeyLimits {
            rates: vec![Rate::with_default_burst(
                Dimension::Requests,
                Period::Minute,
                30_000.0,
            )],
            ..KeyLimits::default()
        };
        let config = EngineConfig {
            max_waiters: waiting * 2,
            ..EngineConfig::default()
        };
        let mut e =
            Engine::new(config, vec![("p/m".to_string(), limits)], base, 1).expect("engine");
        let req = AcquireRequest {
            key: "p/m".into(),
            requests: 1,
            input_tokens: 500,
            output_tokens: 200,
            max_wait: Duration::from_secs(3_600),
            ..AcquireRequest::default()
        };
        let outcome = answered();
        // The burst goes at once; the crowd queues behind it.
        let mut t = base;
        let mut leases = Vec::new();
        while e.waiting() < waiting {
            match e.acquire(&req, t).expect("acquire") {
                Acquired::Granted(g) => leases.push(g.lease_id),
                Acquired::Queued(_) => {}
                Acquired::NotGranted(r) => panic!("refused: {r:?}"),
            }
        }
        for l in leases {
            e.report(&l, &outcome, t).expect("report");
        }
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{waiting} waiting")),
            &waiting,
            |b, _| {
                b.iter(|| {
                    t = t.after(Duration::from_millis(2));
                    e.pump(t);
                    for (_, answer) in e.drain_answers() {
                        if let WaiterAnswer::Granted(g) = answer {
                            black_box(e.report(&g.lease_id, &outcome, t).expect("report"));
                        }
                    }
                    if let Acquired::Granted(g) = e.acquire(&req, t).expect("acquire") {
                        black_box(e.report(&g.lease_id, &outcome, t).expect("report"));
                    }
                    black_box(e.next_wakeup(t));
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, acquire_settle, crowd_grant);
criterion_main!(benches);
