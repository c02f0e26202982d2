//! How the fleet-scale scenario's demand moves: who is busy, who leaves and who joins.

use super::*;

/// Sets who is busy at the start.
pub(super) fn shape_start(spec: &FleetScaleSpec, hosts: &mut [Host], t: Instant) {
    match spec.demand {
        Demand::AllBusy | Demand::JoinLeave => {}
        Demand::OneHot => {
            let light = if hosts.len() > 1 {
                0.25 * spec.limit_per_s / (hosts.len() - 1) as f64
            } else {
                0.0
            };
            for (i, h) in hosts.iter_mut().enumerate() {
                if i == 0 {
                    h.backlog = 64;
                } else {
                    h.arrivals_per_s = light;
                    h.next_arrival = t + Duration::from_secs_f64(fastrand::f64() / light.max(1e-9));
                }
            }
        }
        Demand::Diurnal => set_diurnal(hosts, 0.0),
    }
}

/// The share of busy hosts `phase` (0 to 1) through a day: a tenth at night, all at noon.
pub(super) fn set_diurnal(hosts: &mut [Host], phase: f64) {
    let busy = 0.1 + 0.9 * (1.0 - (phase * std::f64::consts::TAU).cos()) / 2.0;
    let n = ((hosts.len() as f64 * busy).ceil() as usize).max(1);
    for (i, h) in hosts.iter_mut().enumerate() {
        h.busy = i < n;
    }
}

/// Once a second: the diurnal share moves; hosts leave and join.
#[allow(clippy::too_many_arguments)]
pub(super) fn shape_step(
    spec: &FleetScaleSpec,
    hosts: &mut Vec<Host>,
    joined: &mut usize,
    t: Instant,
    started: Instant,
    base: Instant,
    base_unix: i64,
    fleet: &FleetRedis,
) -> Result<(), String> {
    match spec.demand {
        Demand::Diurnal => {
            let phase =
                t.saturating_duration_since(started).as_secs_f64() / spec.duration.as_secs_f64();
            set_diurnal(hosts, phase);
        }
        Demand::JoinLeave => {
            let leaving = (hosts.len() / 20).max(1);
            let live: Vec<usize> = (0..hosts.len()).filter(|&i| !hosts[i].gone).collect();
            for &i in live.iter().take(leaving) {
                let h = &mut hosts[i];
                h.gone = true;
                h.busy = false;
                // Gives back the units it will not use, and the parts of keys not on a line, as
                // a daemon that stops does.
                let taken = h.engine.take_back_fleet_units(now_of(t, base, base_unix));
                let on_line: Vec<String> = taken.iter().map(|(k, _, _)| k.clone()).collect();
                for (key, units, amounts) in taken {
                    let Some(ask) = give_back_ask(&units, amounts, t) else {
                        continue;
                    };
                    let f = fleet.clone();
                    let name = h.name.clone();
                    tokio::spawn(async move {
                        let _ = f.line(&name, &key, &ask).await;
                    });
                }
                // Gives every part back, as a daemon that stops does.
                for k in (0..spec.keys).filter(|&k| !on_line.contains(&key_name(k))) {
                    let f = fleet.clone();
                    let name = h.name.clone();
                    tokio::spawn(async move {
                        let _ = f
                            .part(
                                &name,
                                &key_name(k),
                                0.0,
                                0,
                                0,
                                None,
                                Duration::ZERO,
                                &PartExtras::default(),
                            )
                            .await;
                    });
                }
            }
            for _ in 0..leaving {
                let name = format!("h{joined}");
                *joined += 1;
                hosts.push(Host::new(name, spec, now_of(t, base, base_unix))?);
            }
        }
        Demand::AllBusy | Demand::OneHot => {}
    }
    Ok(())
}
