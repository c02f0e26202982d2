//! Bucket invariants over random sequences of acquires and reports, on a fake clock: a level
//! never rises above its capacity nor sinks below one bucket of debt; a grant takes from every
//! bucket or from none; a report moves the level by exactly what was reserved less what was
//! used, within those bounds.

use super::tests::*;
use super::*;
use proptest::prelude::*;

const REQ_CAP: f64 = 10.0;
const TOK_CAP: f64 = 5000.0;

#[derive(Clone, Debug)]
enum Step {
    Acquire {
        input: i64,
        output: i64,
    },
    /// Reports the outstanding lease at `pick` (modulo their count) with this usage.
    Report {
        pick: usize,
        input: u64,
        extra_output: u64,
    },
}

fn step() -> impl Strategy<Value = (u64, Step)> {
    let acquire =
        (0i64..2500, 0i64..2500).prop_map(|(input, output)| Step::Acquire { input, output });
    let report =
        (any::<usize>(), 0u64..6000, 0u64..3000).prop_map(|(pick, input, extra_output)| {
            Step::Report {
                pick,
                input,
                extra_output,
            }
        });
    (0u64..1500, prop_oneof![acquire, report])
}

fn levels(fx: &mut Fx, ms: u64) -> (f64, f64) {
    (
        fx.level("k", Dimension::Requests, ms),
        fx.level("k", Dimension::Tokens, ms),
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn buckets_keep_their_invariants(steps in prop::collection::vec(step(), 1..60)) {
        let l = limits(vec![
            rate(Dimension::Requests, 600.0, REQ_CAP),
            rate(Dimension::Tokens, 60_000.0, TOK_CAP),
        ]);
        let mut fx = Fx::new(vec![("k", l)]).filled();
        let mut ms = 0u64;
        // Outstanding leases: id, reserved input, reserved output.
        let mut open: Vec<(String, u64, u64)> = Vec::new();
        for (dt, s) in steps {
            ms += dt;
            let (req0, tok0) = levels(&mut fx, ms);
            match s {
                Step::Acquire { input, output } => match fx.acquire("k", input, output, 0, ms) {
                    Acquired::Granted(g) => {
                        let (req1, tok1) = levels(&mut fx, ms);
                        prop_assert!(close(req1, req0 - 1.0), "requests {req0} -> {req1}");
                        prop_assert!(close(tok1, tok0 - (input + output) as f64), "tokens {tok0} -> {tok1}");
                        open.push((g.lease_id, input as u64, output as u64));
                    }
                    Acquired::NotGranted(_) => {
                        // All or nothing: a refusal takes from no bucket.
                        prop_assert_eq!(levels(&mut fx, ms), (req0, tok0));
                        prop_assert!(req0 < 1.0 || tok0 < (input + output) as f64, "refused with room: {req0} {tok0}");
                    }
                    Acquired::Queued(w) => prop_assert!(false, "max_wait 0 queued {w}"),
                },
                Step::Report { pick, input, extra_output } if !open.is_empty() => {
                    let (id, r_in, r_out) = open.remove(pick % open.len());
                    // At least the reserved output, so both ways of counting output charge it.
                    let output = r_out + extra_output;
                    let outcome = Outcome {
                        status: 200,
                        input_tokens: input,
                        output_tokens: output,
                        usage_known: true,
                        attempt: 1,
                        ..Outcome::default()
                    };
                    fx.e.report(&id, &outcome, fx.now(ms)).expect("report");
                    let (req1, tok1) = levels(&mut fx, ms);
                    prop_assert!(close(req1, req0), "a sent request keeps its charge: {req0} -> {req1}");
                    let delta = (r_in + r_out) as f64 - (input + output) as f64;
                    let floor = -bucket::MAX_DEBT_BUCKETS * TOK_CAP;
                    let expected = (tok0 + delta).min(TOK_CAP).max(floor.min(tok0));
                    prop_assert!(close(tok1, expected), "tokens {tok0} + {delta} -> {tok1}, expected {expected}");
                }
                Step::Report { .. } => {}
            }
            let (req, tok) = levels(&mut fx, ms);
            prop_assert!(req <= REQ_CAP + 1e-9 && tok <= TOK_CAP + 1e-9, "above capacity: {req} {tok}");
            prop_assert!(tok >= -bucket::MAX_DEBT_BUCKETS * TOK_CAP - 1e-9, "debt past its bound: {tok}");
        }
    }
}
