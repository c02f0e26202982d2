//! The table a person reads after a run.

use super::RunResult;

/// A table row a person can read.
pub fn table(rows: &[RunResult]) -> String {
    let w = rows
        .iter()
        .map(|r| r.scenario.len())
        .max()
        .unwrap_or(0)
        .max(9);
    let mut out = format!(
        "{:<w$} strategy            P x C    jobs    ok  failed  requests   429s   429 %   wall s  ideal s  efficiency\n",
        "scenario"
    );
    for r in rows {
        out += &format!(
            "{:<w$} {:<18} {:>2} x {:<3} {:>5} {:>5} {:>7} {:>9} {:>6} {:>6.1} % {:>8.1} {:>8.1} {:>10.2}\n",
            r.scenario,
            r.strategy,
            r.processes,
            r.workers,
            r.jobs,
            r.ok,
            r.failed,
            r.provider_requests,
            r.provider_429s,
            100.0 * r.rate_limited_share(),
            r.wall_s,
            r.ideal_s,
            r.efficiency
        );
    }
    let shaped: Vec<&RunResult> = rows
        .iter()
        .filter(|r| {
            r.daily_refused > 0
                || r.in_flight_refused > 0
                || r.max_in_flight_seen > 0 && r.scenario == "max-in-flight"
                || r.undeclared_reserved_over_used.is_some()
        })
        .collect();
    if !shaped.is_empty() {
        out += "\nwhat the shapes add\n";
        for r in shaped {
            let mut parts = Vec::new();
            if let Some(x) = r.undeclared_reserved_over_used {
                parts.push(format!("undeclared output: reserved / used {x:.2}"));
            }
            if r.daily_refused > 0 {
                parts.push(format!(
                    "daily refusals {} (the first, then {} more), last job {:.1} s after the first",
                    r.daily_refused,
                    r.daily_refused - 1,
                    r.after_first_daily_s.unwrap_or(0.0)
                ));
            }
            if r.scenario == "max-in-flight" || r.in_flight_refused > 0 {
                parts.push(format!(
                    "refused for requests in flight {}, most in flight {}",
                    r.in_flight_refused, r.max_in_flight_seen
                ));
            }
            out += &format!("{:<w$} {}\n", r.scenario, parts.join("; "));
        }
    }
    let fleet: Vec<&RunResult> = rows.iter().filter(|r| r.redis_commands.is_some()).collect();
    if !fleet.is_empty() {
        out += "\nRedis commands (fleet mode)\n";
        for r in fleet {
            out += &format!(
                "{:<w$} {:<18} {:>6} commands, {:.3} per request granted\n",
                r.scenario,
                r.strategy,
                r.redis_commands.unwrap_or(0),
                r.redis_commands_per_grant().unwrap_or(0.0)
            );
        }
    }
    let faulted: Vec<&RunResult> = rows.iter().filter(|r| r.fault.is_some()).collect();
    if !faulted.is_empty() {
        out += &format!(
            "\nunder faults ({} s in; admitted: the most requests the provider received in 1 s and in 10 s, all hosts, against the limit plus one burst)\n",
            super::FAULT_AT.as_secs()
        );
        out += &format!(
            "{:<w$}   429s  efficiency (target)  admitted 1 s / bound  10 s / bound   claims asked  granted  duplicated  done  lost  unanswered\n",
            "scenario"
        );
        for r in faulted {
            let c = r.claims.clone().unwrap_or_default();
            out += &format!(
                "{:<w$} {:>6} {:>11.2} ({:>4.2}) {:>11} / {:<5} {:>6} / {:<5} {:>12} {:>8} {:>11} {:>5} {:>5} {:>11}\n",
                r.scenario,
                r.provider_429s,
                r.efficiency,
                r.fault.map_or(0.0, |f| f.efficiency_target()),
                r.admitted_most_1s,
                r.admitted_bound_1s,
                r.admitted_most_10s,
                r.admitted_bound_10s,
                c.asked,
                c.granted,
                c.duplicated,
                c.done,
                c.lost,
                c.unanswered
            );
        }
    }
    let waits: Vec<&RunResult> = rows
        .iter()
        .filter(|r| r.interactive_wait_p50_ms.is_some())
        .collect();
    if !waits.is_empty() {
        out += "\nqueue wait (arrival to the successful attempt), ms\nscenario  strategy            interactive p50   p95   batch p50    p95\n";
        let f = |v: Option<u64>| v.map_or("-".to_string(), |x| x.to_string());
        for r in waits {
            out += &format!(
                "{:<9} {:<18} {:>15} {:>5} {:>11} {:>6}\n",
                r.scenario,
                r.strategy,
                f(r.interactive_wait_p50_ms),
                f(r.interactive_wait_p95_ms),
                f(r.batch_wait_p50_ms),
                f(r.batch_wait_p95_ms)
            );
        }
    }
    out
}
