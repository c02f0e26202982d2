//! The fleet-faults scenario: the fleet under the incident load (3 hosts x 3 processes x 8
//! workers, 600 jobs, one provider limit shared through Redis) with one fault 10 s in, each row
//! with a fresh Redis and three fresh daemons: Redis killed, Redis restarted empty, Redis
//! frozen, one daemon frozen, one daemon killed and started again, one daemon cut off from
//! Redis. Beside the load, the same jobs are claimed of every host at once all through the
//! fault, and every job done is checked again at the end: how many were granted twice, how
//! many results were lost or changed.

use super::*;
use crate::cuttable::Cuttable;
use crate::redis_server::RedisServer;
use llmctl_client::pb;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One fault of the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FleetFault {
    /// No fault: the baseline.
    None,
    /// Redis killed and never started again.
    RedisKilled,
    /// Redis killed and started again empty 5 s later.
    RedisRestartedEmpty,
    /// Redis frozen (SIGSTOP) for 8 s.
    RedisFrozen,
    /// The third daemon frozen for 15 s: its clients wait.
    DaemonFrozen,
    /// The third daemon killed (SIGKILL) and started again 3 s later.
    DaemonKilled,
    /// The same, with clients that fail open at once (no restart wait, no fail-static), as
    /// older clients and other tools do: what their unlimited calls cost the others.
    DaemonKilledFailOpen,
    /// The third daemon cut off from Redis for 15 s while it keeps serving its clients.
    Partition,
}

impl FleetFault {
    pub const ALL: [FleetFault; 8] = [
        FleetFault::None,
        FleetFault::RedisKilled,
        FleetFault::RedisRestartedEmpty,
        FleetFault::RedisFrozen,
        FleetFault::DaemonFrozen,
        FleetFault::DaemonKilled,
        FleetFault::DaemonKilledFailOpen,
        FleetFault::Partition,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FleetFault::None => "none",
            FleetFault::RedisKilled => "redis-killed",
            FleetFault::RedisRestartedEmpty => "redis-restarted-empty",
            FleetFault::RedisFrozen => "redis-frozen",
            FleetFault::DaemonFrozen => "daemon-frozen",
            FleetFault::DaemonKilled => "daemon-killed",
            FleetFault::DaemonKilledFailOpen => "daemon-killed-fail-open",
            FleetFault::Partition => "partition",
        }
    }

    /// The efficiency the fault must keep (issue targets: Redis gone for good costs a
    /// host's idle part, a daemon kill almost nothing).
    pub fn efficiency_target(self) -> f64 {
        match self {
            FleetFault::RedisKilled => 0.75,
            FleetFault::DaemonKilled => 0.9,
            _ => 0.85,
        }
    }
}

/// When the fault begins, after the jobs start.
pub const FAULT_AT: Duration = Duration::from_secs(10);
/// The host the daemon faults hit (the last).
const FAULTED: usize = 2;
const PROCESSES_PER_HOST: usize = 3;
/// The share of the jobs each host has.
const HOST_SHARES: [f64; 3] = [0.2, 0.3, 0.5];
const WORKERS: usize = 8;
/// How often a new job is claimed of every host.
const CLAIM_EVERY: Duration = Duration::from_millis(200);
/// The longest one claim call may take.
const CLAIM_TIMEOUT: Duration = Duration::from_secs(2);

impl Scenario {
    /// Every row of the fleet-faults scenario.
    pub fn fleet_faults_matrix(jobs: Option<usize>) -> Vec<Scenario> {
        FleetFault::ALL
            .iter()
            .map(|&f| Self::fleet_fault(f, jobs))
            .collect()
    }

    pub fn fleet_fault(fault: FleetFault, jobs: Option<usize>) -> Scenario {
        let mut s = Self::fleet(FleetLoad::Even, Some(jobs.unwrap_or(600)));
        let all: Vec<Job> = s.jobs.drain(..).flatten().collect();
        // Hosts with more and less to do, as in a real fleet: the first finishes well before
        // the last (the faulted one, which has the most).
        let n = all.len();
        let mut per_host = vec![Vec::new(); HOST_SHARES.len()];
        let mut cut = 0;
        for (h, share) in HOST_SHARES.iter().enumerate() {
            let end = if h + 1 == HOST_SHARES.len() {
                n
            } else {
                cut + (n as f64 * share).round() as usize
            };
            per_host[h] = all[cut..end].to_vec();
            cut = end;
        }
        s.jobs = per_host
            .into_iter()
            .flat_map(|host| deal(host, PROCESSES_PER_HOST, None))
            .collect();
        s.name = ScenarioName::FleetFaults;
        s.workers = WORKERS;
        s.fault = Some(fault);
        s
    }
}

/// Redis, and the faulted host's way to it (cut in a partition).
pub(super) struct Rig {
    pub redis: RedisServer,
    pub way: Option<Cuttable>,
}

impl Rig {
    pub fn start(fault: FleetFault) -> Result<Rig, SimError> {
        let redis = RedisServer::start()
            .map_err(|e| SimError::Daemon(format!("the fleet's Redis: {e}")))?;
        let way = match fault {
            FleetFault::Partition => {
                let path = redis
                    .socket()
                    .with_file_name(format!("way-{}.sock", std::process::id()));
                Some(
                    Cuttable::new(redis.socket(), path)
                        .map_err(|e| SimError::Daemon(format!("a way to Redis: {e}")))?,
                )
            }
            _ => None,
        };
        Ok(Rig { redis, way })
    }

    /// The Redis URL host `h` is configured with.
    pub fn url_for(&self, h: usize) -> String {
        match &self.way {
            Some(w) if h == FAULTED => w.url(),
            _ => self.redis.url(),
        }
    }
}

/// Waits until `at`, does `fault`, and heals it.
pub(super) async fn inject(
    fault: FleetFault,
    at: Instant,
    rig: &mut Rig,
    daemons: &mut [LocalDaemon],
) -> Result<(), SimError> {
    tokio::time::sleep_until(at.into()).await;
    let host = daemons
        .get_mut(FAULTED)
        .ok_or_else(|| SimError::Daemon("the fault needs three hosts".into()))?;
    let sleep = |s: u64| tokio::time::sleep(Duration::from_secs(s));
    match fault {
        FleetFault::None => {}
        FleetFault::RedisKilled => rig.redis.stop(),
        FleetFault::RedisRestartedEmpty => {
            rig.redis.stop();
            sleep(5).await;
            rig.redis
                .restart()
                .map_err(|e| SimError::Daemon(format!("Redis again: {e:?}")))?;
        }
        FleetFault::RedisFrozen => {
            rig.redis.freeze();
            sleep(8).await;
            rig.redis.thaw();
        }
        FleetFault::DaemonFrozen => {
            host.freeze();
            sleep(15).await;
            host.thaw();
        }
        FleetFault::DaemonKilled | FleetFault::DaemonKilledFailOpen => {
            host.kill().await;
            sleep(3).await;
            host.restart().await.map_err(SimError::Daemon)?;
        }
        FleetFault::Partition => {
            if let Some(w) = &rig.way {
                w.cut();
                sleep(15).await;
                w.heal()
                    .map_err(|e| SimError::Daemon(format!("the way to Redis again: {e}")))?;
            }
        }
    }
    Ok(())
}

/// What the claims asked through a fault came to.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ClaimCounts {
    /// Claim calls made.
    pub asked: u64,
    /// Answered CLAIMED.
    pub granted: u64,
    /// CLAIMED for a job already granted before (to any host): done twice.
    pub duplicated: u64,
    /// Jobs completed.
    pub done: u64,
    /// Jobs completed that, asked again, were not DONE with the result stored: CLAIMED
    /// again or another result (during the fault or at the end), or not known (DATA_LOSS) at
    /// the end, once the fault was over.
    pub lost: u64,
    /// Calls not answered (the host or its Redis away), or answered DATA_LOSS during the
    /// fault.
    pub unanswered: u64,
}

enum Answer {
    Claimed,
    Pending,
    Done(Vec<u8>),
    /// DATA_LOSS: the store lost records and does not know the job.
    Unknown,
    Unanswered,
}

async fn claim(socket: &Path, job: &str, accept_lost_history: bool) -> Answer {
    let call = async {
        let mut c = llmctl_client::connect(socket).await.ok()?;
        let r = match c
            .claim(pb::ClaimRequest {
                key: job.to_string(),
                ttl_ms: 120_000,
                accept_lost_history,
            })
            .await
        {
            Ok(r) => r.into_inner(),
            Err(s) if s.code() == tonic::Code::DataLoss => return Some(Answer::Unknown),
            Err(_) => return None,
        };
        use pb::claim_response::State;
        Some(match State::try_from(r.state) {
            Ok(State::Claimed) => Answer::Claimed,
            Ok(State::Pending) => Answer::Pending,
            Ok(State::Done) => Answer::Done(r.result),
            _ => Answer::Unanswered,
        })
    };
    tokio::time::timeout(CLAIM_TIMEOUT, call)
        .await
        .ok()
        .flatten()
        .unwrap_or(Answer::Unanswered)
}

async fn complete(socket: &Path, job: &str) -> bool {
    let call = async {
        let mut c = llmctl_client::connect(socket).await.ok()?;
        c.complete(pb::CompleteRequest {
            key: job.to_string(),
            result: job.as_bytes().to_vec(),
        })
        .await
        .ok()
    };
    matches!(tokio::time::timeout(CLAIM_TIMEOUT, call).await, Ok(Some(_)))
}

/// Claims a new job of every host at once every [`CLAIM_EVERY`] until `stop`, completes it on
/// the host granted it, asks a job done before again of one host each time, and at the end
/// asks every job done of every host.
pub(super) async fn probe_claims(sockets: Vec<PathBuf>, stop: Arc<AtomicBool>) -> ClaimCounts {
    let mut counts = ClaimCounts::default();
    // Job -> times granted; the jobs done.
    let mut granted: HashMap<String, u64> = HashMap::new();
    let mut done: Vec<String> = Vec::new();
    let mut lost: std::collections::HashSet<String> = Default::default();
    let mut rng = fastrand::Rng::with_seed(7);
    let tag = std::process::id();
    let mut n = 0u64;
    // A done job must come back done, with its result; not known is not lost while the
    // fault lasts (`at_end`: it is then).
    let check = |answer: &Answer, job: &str, at_end: bool, counts: &mut ClaimCounts| -> bool {
        match answer {
            Answer::Done(r) => r.as_slice() == job.as_bytes(),
            Answer::Unknown if at_end => false,
            Answer::Unknown | Answer::Unanswered => {
                counts.unanswered += 1;
                true
            }
            Answer::Claimed | Answer::Pending => false,
        }
    };
    while !stop.load(Ordering::Relaxed) {
        let next = tokio::time::Instant::now() + CLAIM_EVERY;
        n += 1;
        let job = format!("sim-job-{tag}-{n}");
        // Every host asked at the same moment.
        let asks: Vec<_> = sockets
            .iter()
            .map(|s| {
                let (s, job) = (s.clone(), job.clone());
                tokio::spawn(async move { claim(&s, &job, true).await })
            })
            .collect();
        let mut answers = Vec::new();
        for a in asks {
            answers.push(a.await.unwrap_or(Answer::Unanswered));
        }
        for (h, a) in answers.iter().enumerate() {
            counts.asked += 1;
            match a {
                Answer::Claimed => {
                    counts.granted += 1;
                    let times = granted.entry(job.clone()).or_insert(0);
                    *times += 1;
                    if *times > 1 {
                        counts.duplicated += 1;
                    }
                    if complete(&sockets[h], &job).await {
                        done.push(job.clone());
                    }
                }
                Answer::Unanswered | Answer::Unknown => counts.unanswered += 1,
                _ => {}
            }
        }
        if !done.is_empty() {
            let old = done[rng.usize(..done.len())].clone();
            let h = rng.usize(..sockets.len());
            counts.asked += 1;
            let a = claim(&sockets[h], &old, false).await;
            if matches!(a, Answer::Claimed) {
                counts.duplicated += 1;
            }
            if !check(&a, &old, false, &mut counts) {
                lost.insert(old);
            }
        }
        tokio::time::sleep_until(next).await;
    }
    for job in &done {
        for s in &sockets {
            counts.asked += 1;
            let a = claim(s, job, false).await;
            if matches!(a, Answer::Claimed) {
                counts.duplicated += 1;
            }
            if !check(&a, job, true, &mut counts) {
                lost.insert(job.clone());
            }
        }
    }
    counts.done = done.len() as u64;
    counts.lost = lost.len() as u64;
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_is_a_row_of_three_hosts_of_three_processes() {
        let rows = Scenario::fleet_faults_matrix(None);
        assert_eq!(rows.len(), 8);
        for r in &rows {
            assert_eq!((r.hosts, r.processes(), r.workers), (3, 9, 8));
            assert_eq!(r.job_count(), 600);
        }
        assert_eq!(rows[5].label(), "fleet-faults/daemon-killed");
        assert_eq!(FleetFault::DaemonKilled.efficiency_target(), 0.9);
    }
}
