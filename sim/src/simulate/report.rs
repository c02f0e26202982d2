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
