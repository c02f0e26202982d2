//! `llmctl simulate` and its worker processes.

use crate::exit;
use clap::Args;
use llmctl_sim::simulate::{
    self, FleetFault, FleetLoad, RunResult, Scenario, ScenarioName, Strategy, WorkerSpec,
};
use serde_json::json;
use std::io::Read;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// A workload to run (repeatable) [default: all but calibrate and fleet]
    #[arg(long = "scenario", value_name = "NAME", value_enum)]
    scenarios: Vec<ScenarioName>,
    /// A strategy to compare (repeatable) [default: the fleet's three in the fleet scenario, the others elsewhere]
    #[arg(long = "strategy", value_name = "NAME", value_enum)]
    strategies: Vec<Strategy>,
    /// Jobs in the incident, skew and priority scenarios [default: 300, 300, 240]
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Jobs not done by then count as failed
    #[arg(long, default_value = "90s", value_parser = super::duration, value_name = "DUR")]
    max_run_time: Duration,
    /// Only the calibrate, shapes, clouds, fleet, fleet-faults or agents rows with these names,
    /// like headerless/none, max-in-flight, bedrock, crowd, daemon-killed or codex/llmctl
    /// (repeatable) [default: all; the fleet's crowd row only by name]
    #[arg(long = "row", value_name = "NAME")]
    rows: Vec<String>,
    /// Print the results as JSON
    #[arg(long)]
    json: bool,
    /// Keep every core busy beside each run (one busy loop per core, at the run's priority), as
    /// a loaded machine or workers that compute between their calls
    #[arg(long)]
    busy: bool,
    /// The shapes rows' workers: the openai SDK through the Python transport, in every row (as
    /// the -python rows are)
    #[arg(long)]
    python_workers: bool,
    /// Virtual hosts in the fleet-scale scenario
    #[arg(long, value_name = "N", default_value_t = 100)]
    hosts: usize,
    /// Keys the fleet-scale scenario's hosts share, each its own quota
    #[arg(long, value_name = "K", default_value_t = 1)]
    keys: usize,
    /// Requests each busy host of the fleet-scale scenario keeps waiting on each key (fewer
    /// make many keys on many hosts lighter for the simulator: a host of a thousand on one key
    /// is given a request of it every 50 s)
    #[arg(long, value_name = "N", default_value_t = 32)]
    backlog: usize,
    /// How long the fleet-scale scenario runs
    #[arg(long, default_value = "20s", value_parser = super::duration, value_name = "DUR")]
    duration: Duration,
    /// How long the fleet-scale scenario's hosts run before it measures (their joining is
    /// then not counted: the steady state is)
    #[arg(long, default_value = "0s", value_parser = super::duration, value_name = "DUR")]
    warmup: Duration,
}

pub async fn run(args: SimulateArgs) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return exit::fail(exit::SOFTWARE, format!("cannot find this executable: {e}")),
    };
    let scenarios = if args.scenarios.is_empty() {
        ScenarioName::ALL.to_vec()
    } else {
        args.scenarios.clone()
    };
    if args.jobs == Some(0) {
        return exit::fail(
            exit::USAGE,
            "--jobs 0 leaves nothing to run; give at least 1",
        );
    }
    let mut rows: Vec<RunResult> = Vec::new();
    let mut agent_rows: Vec<simulate::agents::AgentsResult> = Vec::new();
    let mut scale_rows: Vec<simulate::fleet_scale::FleetScaleResult> = Vec::new();
    for name in scenarios {
        if name == ScenarioName::FleetScale {
            match fleet_scale(&args, &mut scale_rows).await {
                Ok(()) => continue,
                Err(code) => return code,
            }
        }
        if name == ScenarioName::Agents {
            let mut matrix = simulate::agents::AgentsRow::all();
            if !args.rows.is_empty() {
                matrix.retain(|r| args.rows.contains(&r.label()));
                if matrix.is_empty() {
                    let names = simulate::agents::AgentsRow::all()
                        .into_iter()
                        .map(|r| r.label());
                    return no_such_row("agents", &args.rows, names);
                }
            }
            for row in matrix {
                if !args.json {
                    eprintln!("running agents {}...", row.label());
                }
                match simulate::agents::run(&exe, row, args.max_run_time).await {
                    Ok(r) => agent_rows.push(r),
                    Err(e) => {
                        return exit::fail(exit::SOFTWARE, format!("agents {}: {e}", row.label()))
                    }
                }
            }
            continue;
        }
        // The calibrate matrix is about the daemon's limits: only the llmctl strategy has any.
        let (runs, strategies) = if matches!(
            name,
            ScenarioName::Calibrate | ScenarioName::Shapes | ScenarioName::Clouds
        ) {
            let all = |jobs| match name {
                ScenarioName::Shapes => Scenario::shapes_matrix(jobs),
                ScenarioName::Clouds => Scenario::clouds_matrix(jobs),
                _ => Scenario::calibrate_matrix(jobs),
            };
            let mut matrix = all(args.jobs);
            if !args.rows.is_empty() {
                matrix.retain(|s| args.rows.contains(&s.label()));
                if matrix.is_empty() {
                    let names: Vec<String> = all(Some(1)).iter().map(Scenario::label).collect();
                    return exit::fail(
                        exit::USAGE,
                        format!(
                            "no {} row is named {}; choose from {}",
                            name.name(),
                            args.rows.join(", "),
                            names.join(", ")
                        ),
                    );
                }
            }
            (matrix, vec![Strategy::Llmctl])
        } else {
            let strategies = if args.strategies.is_empty() {
                Strategy::defaults(name)
            } else {
                args.strategies.clone()
            };
            let mut runs = match name {
                ScenarioName::Fleet => Scenario::fleet_matrix(args.jobs),
                ScenarioName::FleetFaults => Scenario::fleet_faults_matrix(args.jobs),
                _ => vec![Scenario::build(name, args.jobs)],
            };
            if name == ScenarioName::Fleet && !args.rows.is_empty() {
                runs = FleetLoad::NAMED
                    .into_iter()
                    .filter(|l| args.rows.iter().any(|r| r == l.name()))
                    .map(|l| Scenario::fleet(l, args.jobs))
                    .collect();
                if runs.len() != args.rows.len() {
                    let names = FleetLoad::NAMED.iter().map(|l| l.name().to_string());
                    return no_such_row("fleet", &args.rows, names);
                }
            }
            if name == ScenarioName::FleetFaults && !args.rows.is_empty() {
                runs.retain(|s| {
                    s.fault
                        .is_some_and(|f| args.rows.iter().any(|r| r == f.name()))
                });
                if runs.is_empty() {
                    let names = FleetFault::ALL.iter().map(|f| f.name().to_string());
                    return no_such_row("fleet-faults", &args.rows, names);
                }
            }
            (runs, strategies)
        };
        for mut scenario in runs {
            if args.python_workers && name == ScenarioName::Shapes {
                scenario.python_workers = true;
            }
            let provider = match simulate::provider_for(&scenario).await {
                Ok(p) => p,
                Err(e) => return exit::fail(exit::SOFTWARE, e),
            };
            for &strategy in &strategies {
                if !args.json {
                    eprintln!(
                        "running {} ({} jobs, {} x {} workers) with {}...",
                        scenario.label(),
                        scenario.job_count(),
                        scenario.processes(),
                        scenario.workers,
                        strategy.name()
                    );
                }
                let busy = args.busy.then(|| simulate::busy::Busy::start(None));
                let run =
                    simulate::run_one(&exe, &provider, &scenario, strategy, args.max_run_time)
                        .await;
                drop(busy);
                match run {
                    Ok(mut r) => {
                        r.busy = args.busy;
                        rows.push(r)
                    }
                    Err(e) => {
                        return exit::fail(
                            exit::SOFTWARE,
                            format!("{} with {}: {e}", scenario.label(), strategy.name()),
                        )
                    }
                }
            }
        }
    }
    if args.json && rows.is_empty() && agent_rows.is_empty() && !scale_rows.is_empty() {
        // The fleet-scale scenario alone: one JSON object a run, a line each.
        for r in &scale_rows {
            println!("{}", json!(r));
        }
        return ExitCode::SUCCESS;
    }
    if args.json {
        let mut out = json!({ "runs": rows.iter().map(RunResult::to_json).collect::<Vec<_>>() });
        if !scale_rows.is_empty() {
            out["fleet_scale"] = json!(scale_rows);
        }
        if !agent_rows.is_empty() {
            out["agents"] = agent_rows
                .iter()
                .map(simulate::agents::AgentsResult::to_json)
                .collect();
        }
        println!("{out}");
    } else {
        if !rows.is_empty() {
            print!("{}", simulate::table(&rows));
        }
        if !agent_rows.is_empty() {
            print!("{}", simulate::agents::table(&agent_rows));
        }
        if !scale_rows.is_empty() {
            print!("{}", simulate::fleet_scale::table(&scale_rows));
        }
    }
    ExitCode::SUCCESS
}

/// The fleet-scale scenario, a run for each demand shape asked (`--row`; all-busy when none).
async fn fleet_scale(
    args: &SimulateArgs,
    out: &mut Vec<simulate::fleet_scale::FleetScaleResult>,
) -> Result<(), ExitCode> {
    use simulate::fleet_scale::{Demand, FleetScaleSpec};
    if args.hosts == 0 || args.keys == 0 || args.backlog == 0 {
        return Err(exit::fail(
            exit::USAGE,
            format!(
                "--hosts {} --keys {} --backlog {} leaves nothing to run; give at least 1 of each",
                args.hosts, args.keys, args.backlog
            ),
        ));
    }
    let demands: Vec<Demand> = if args.rows.is_empty() {
        vec![Demand::AllBusy]
    } else {
        let picked: Vec<Demand> = Demand::ALL
            .into_iter()
            .filter(|d| args.rows.iter().any(|r| r == d.name()))
            .collect();
        if picked.len() != args.rows.len() {
            return Err(no_such_row(
                "fleet-scale",
                &args.rows,
                Demand::ALL.iter().map(|d| d.name().to_string()),
            ));
        }
        picked
    };
    for demand in demands {
        if !args.json {
            eprintln!(
                "running fleet-scale {} ({} hosts, {} key(s), {:?})...",
                demand.name(),
                args.hosts,
                args.keys,
                args.duration
            );
        }
        let spec = FleetScaleSpec {
            warmup: args.warmup,
            backlog: args.backlog,
            ..FleetScaleSpec::new(args.hosts, args.keys, demand, args.duration)
        };
        match simulate::fleet_scale::run(&spec).await {
            Ok(r) => out.push(r),
            Err(e) => {
                return Err(exit::fail(
                    exit::SOFTWARE,
                    format!("fleet-scale {}: {e}", demand.name()),
                ))
            }
        }
    }
    Ok(())
}

/// `--row` names no row of `scenario`: which there are.
fn no_such_row(scenario: &str, asked: &[String], names: impl Iterator<Item = String>) -> ExitCode {
    let names: Vec<String> = names.collect();
    exit::fail(
        exit::USAGE,
        format!(
            "no {scenario} row is named {}; choose from {}",
            asked.join(", "),
            names.join(", ")
        ),
    )
}

/// One worker process: a JSON spec on stdin, a JSON result on stdout.
pub async fn worker() -> ExitCode {
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        return exit::fail(
            exit::USAGE,
            format!("cannot read the worker spec from stdin: {e}"),
        );
    }
    let spec: WorkerSpec = match serde_json::from_slice(&input) {
        Ok(s) => s,
        Err(e) => {
            return exit::fail(
                exit::USAGE,
                format!("the worker spec on stdin is not valid: {e}"),
            )
        }
    };
    let result = simulate::worker::run(spec).await;
    match serde_json::to_string(&result) {
        Ok(s) => {
            println!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => exit::fail(exit::SOFTWARE, e),
    }
}
