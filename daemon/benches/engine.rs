//! Engine throughput: one acquire and its settle, on one thread, with 1 and 1,000 keys.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use llmctl_daemon::engine::{
    AcquireRequest, Acquired, Dimension, Engine, EngineConfig, KeyLimits, Now, Outcome, Period,
    Rate,
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

fn acquire_settle(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine acquire+settle");
    group.throughput(Throughput::Elements(1));
    for keys in [1usize, 1000] {
        let base = Now {
            mono: Instant::now(),
            unix_ms: 1_800_000_000_000,
        };
        let (mut e, reqs) = engine(keys, base);
        let outcome = Outcome {
            status: 200,
            input_tokens: 480,
            output_tokens: 150,
            usage_known: true,
            attempt: 1,
            ..Outcome::default()
        };
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

criterion_group!(benches, acquire_settle);
criterion_main!(benches);
