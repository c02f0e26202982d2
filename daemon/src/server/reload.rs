//! SIGHUP: the config read again and applied to the running engine, or logged and ignored when
//! it is invalid.

use super::{now, Reload, Shared};
use crate::config::Config;
use std::sync::Arc;
use tokio::sync::watch;

/// Settings the running daemon keeps until it restarts.
fn fixed_settings(c: &Config) -> Vec<(&'static str, String)> {
    let d = &c.daemon;
    vec![
        ("data_dir", format!("{:?}", d.data_dir)),
        ("socket_group", format!("{:?}", d.socket_group)),
        ("metrics_addr", format!("{:?}", d.metrics_addr)),
        ("snapshot_interval", format!("{:?}", d.snapshot_interval)),
        ("claim_retention", format!("{:?}", d.claim_retention)),
        ("max_claim_result", format!("{:?}", d.max_claim_result)),
    ]
}

/// Reloads the config on every SIGHUP until the daemon stops: a valid one replaces limits,
/// profiles, route groups, run budgets and bounds at once; an invalid one is logged and the
/// running config kept.
pub(super) async fn reload_on_hangup(
    shared: Arc<Shared>,
    reload: Option<Reload>,
    running: Config,
    mut stop: watch::Receiver<bool>,
) {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut hangups) = signal(SignalKind::hangup()) else {
        return;
    };
    loop {
        tokio::select! {
            got = hangups.recv() => if got.is_none() { return },
            _ = stop.changed() => return,
        }
        let Some(reload) = &reload else {
            tracing::warn!(
                "SIGHUP: this daemon runs on embedded defaults and has no config to reload"
            );
            continue;
        };
        let config = match (reload.0)() {
            Ok(c) => c,
            Err(e) => {
                tracing::error!("SIGHUP: config not reloaded, the running one is kept: {e}");
                continue;
            }
        };
        let t = now();
        let res = {
            let mut core = shared.core();
            let res = core
                .engine
                .reconfigure(config.engine_config(), config.keys.clone(), t);
            core.deliver(t);
            res
        };
        match res {
            Ok(()) => {
                for ((name, was), (_, is)) in fixed_settings(&running)
                    .into_iter()
                    .zip(fixed_settings(&config))
                {
                    if was != is {
                        tracing::warn!("SIGHUP: {name} changes only when the daemon restarts");
                    }
                }
                tracing::info!(
                    "SIGHUP: config reloaded ({} configured key(s))",
                    config.keys.len()
                );
                shared.driver.notify_one();
                shared.persist.notify_one();
            }
            Err(e) => {
                tracing::error!("SIGHUP: config not reloaded, the running one is kept: {e}")
            }
        }
    }
}
