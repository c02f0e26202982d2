//! The usual alternative to llmctl, measured beside it: a token bucket in a Redis Lua script,
//! called over a Unix socket with the `redis` client.

use redis::aio::MultiplexedConnection;
use std::path::Path;

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

/// A connection to the bench's Redis over its Unix socket.
pub async fn connect(socket: &Path) -> redis::RedisResult<MultiplexedConnection> {
    let client = redis::Client::open(format!("unix://{}", socket.display()))?;
    client.get_multiplexed_async_connection().await
}

/// Loads the script and returns its SHA.
pub async fn load_script(socket: &Path) -> redis::RedisResult<String> {
    let mut c = connect(socket).await?;
    redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(SCRIPT)
        .query_async(&mut c)
        .await
}

/// One acquire against the Redis bucket: true when granted.
pub async fn acquire(
    c: &mut MultiplexedConnection,
    sha: &str,
    key: &str,
) -> redis::RedisResult<bool> {
    let now = llmctl_client::time::now_unix_ms();
    // The same limits as the bench daemon's key: far above the load.
    let rate = 1e12 / 60_000.0;
    let cap = 1e12 / 60.0;
    let granted: i64 = redis::cmd("EVALSHA")
        .arg(sha)
        .arg(2)
        .arg(format!("{key}:requests"))
        .arg(format!("{key}:tokens"))
        .arg(now)
        .arg(rate)
        .arg(cap)
        .arg(rate)
        .arg(cap)
        .arg(200)
        .query_async(c)
        .await?;
    Ok(granted == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_lua_bucket_grants_and_keeps_its_levels_in_redis() {
        let r = llmctl_sim::redis_server::RedisServer::start().expect("start redis-server");
        let sha = load_script(&r.socket()).await.expect("load");
        let mut c = connect(&r.socket()).await.expect("connect");
        assert!(acquire(&mut c, &sha, "k").await.expect("acquire"));
        assert!(acquire(&mut c, &sha, "k").await.expect("acquire"));
        let level: f64 = redis::cmd("HGET")
            .arg("k:tokens")
            .arg("l")
            .query_async(&mut c)
            .await
            .expect("level");
        // Two grants of 200 tokens from a full bucket: the second finds it full again unless
        // both fell in the same millisecond (the refill is 1.7e7 tokens a millisecond).
        let cap = 1e12 / 60.0;
        let near = |x: f64| (level - x).abs() < 1.0;
        assert!(near(cap - 200.0) || near(cap - 400.0), "{level}");
    }
}
