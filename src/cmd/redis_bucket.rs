//! The usual alternative to llmctl, measured beside it: a token bucket in a Redis Lua script,
//! called over a Unix socket. A minimal RESP client is enough for EVALSHA.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

/// Two buckets (requests, tokens), continuous refill, all or nothing: what llmctl's Acquire
/// does for one key, in the shape people write it for Redis.
pub const SCRIPT: &str = r#"
local now = tonumber(ARGV[1])
local function level(key, rate, cap)
  local v = redis.call('HMGET', key, 'l', 't')
  local l = tonumber(v[1]) or cap
  local t = tonumber(v[2]) or now
  return math.min(cap, l + math.max(0, now - t) * rate)
end
local r = level(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
local k = level(KEYS[2], tonumber(ARGV[4]), tonumber(ARGV[5]))
local need = tonumber(ARGV[6])
if r >= 1 and k >= need then
  redis.call('HSET', KEYS[1], 'l', r - 1, 't', now)
  redis.call('HSET', KEYS[2], 'l', k - need, 't', now)
  return 1
end
return 0
"#;

#[derive(Debug, PartialEq)]
pub enum Reply {
    Simple(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

pub struct Resp {
    io: BufReader<UnixStream>,
}

impl Resp {
    pub async fn connect(path: &Path) -> std::io::Result<Resp> {
        Ok(Resp {
            io: BufReader::new(UnixStream::connect(path).await?),
        })
    }

    pub async fn call(&mut self, args: &[&[u8]]) -> std::io::Result<Reply> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.io.get_mut().write_all(&out).await?;
        self.read().await
    }

    async fn line(&mut self) -> std::io::Result<String> {
        let mut s = String::new();
        self.io.read_line(&mut s).await?;
        Ok(s.trim_end_matches("\r\n").to_string())
    }

    fn read(
        &mut self,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Reply>> + Send + '_>>
    {
        Box::pin(async move {
            let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidData, m);
            let l = self.line().await?;
            let (kind, rest) = l.split_at(l.len().min(1));
            match kind {
                "+" => Ok(Reply::Simple(rest.to_string())),
                "-" => Err(bad(format!("redis: {rest}"))),
                ":" => rest.parse().map(Reply::Int).map_err(|_| bad(l.clone())),
                "$" => {
                    let n: i64 = rest.parse().map_err(|_| bad(l.clone()))?;
                    if n < 0 {
                        return Ok(Reply::Bulk(None));
                    }
                    let mut buf = vec![0u8; n as usize + 2];
                    self.io.read_exact(&mut buf).await?;
                    buf.truncate(n as usize);
                    Ok(Reply::Bulk(Some(buf)))
                }
                "*" => {
                    let n: i64 = rest.parse().map_err(|_| bad(l.clone()))?;
                    let mut items = Vec::new();
                    for _ in 0..n.max(0) {
                        items.push(self.read().await?);
                    }
                    Ok(Reply::Array(items))
                }
                _ => Err(bad(format!("unexpected reply {l:?}"))),
            }
        })
    }
}

/// A redis-server of its own on a Unix socket in a temporary folder, stopped when dropped.
pub struct TempRedis {
    child: Child,
    dir: PathBuf,
    pub socket: PathBuf,
}

impl Drop for TempRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl TempRedis {
    /// None when redis-server is not installed.
    pub fn start() -> Result<Option<TempRedis>, String> {
        let dir = std::env::temp_dir().join(format!("llmctl-bench-redis-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let socket = dir.join("redis.sock");
        let child = match Command::new("redis-server")
            .args([
                "--port",
                "0",
                "--save",
                "",
                "--appendonly",
                "no",
                "--unixsocketperm",
                "700",
                "--unixsocket",
            ])
            .arg(&socket)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot start redis-server: {e}")),
        };
        let r = TempRedis { child, dir, socket };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::os::unix::net::UnixStream::connect(&r.socket).is_err() {
            if Instant::now() > deadline {
                return Err("redis-server did not open its socket within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Some(r))
    }
}

/// Loads the script and returns its SHA.
pub async fn load_script(socket: &Path) -> std::io::Result<String> {
    let mut c = Resp::connect(socket).await?;
    match c.call(&[b"SCRIPT", b"LOAD", SCRIPT.as_bytes()]).await? {
        Reply::Bulk(Some(sha)) => Ok(String::from_utf8_lossy(&sha).to_string()),
        other => Err(std::io::Error::other(format!(
            "SCRIPT LOAD answered {other:?}"
        ))),
    }
}

/// One acquire against the Redis bucket: true when granted.
pub async fn acquire(c: &mut Resp, sha: &str, key: &str) -> std::io::Result<bool> {
    let now = llmctl_client::time::now_unix_ms().to_string();
    let (kr, kt) = (format!("{key}:requests"), format!("{key}:tokens"));
    // The same limits as the bench daemon's key: far above the load.
    let rate = (1e12 / 60_000.0).to_string();
    let cap = (1e12 / 60.0).to_string();
    let args: [&[u8]; 11] = [
        b"EVALSHA",
        sha.as_bytes(),
        b"2",
        kr.as_bytes(),
        kt.as_bytes(),
        now.as_bytes(),
        rate.as_bytes(),
        cap.as_bytes(),
        rate.as_bytes(),
        cap.as_bytes(),
        b"200",
    ];
    match c.call(&args).await? {
        Reply::Int(n) => Ok(n == 1),
        other => Err(std::io::Error::other(format!("EVALSHA answered {other:?}"))),
    }
}
