//! What a local process must not be able to do to `llmctl proxy`: hold connections open by
//! sending half a request, crowd out a new client with idle connections, or send headers
//! without bound. Each bound is a `[proxy]` setting, small here so the test stays small.

use crate::harness::Daemon;
use llmctl_proxy::{ProxyConfig, Running};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn proxy(daemon: &Daemon, extra: &str) -> Running {
    let text = format!("[proxy]\nlisten = \"127.0.0.1:0\"\n{extra}\n");
    let config = ProxyConfig::parse(&text, "test").expect("proxy config");
    Running::start(config, daemon.socket.clone())
        .await
        .expect("proxy starts")
}

/// What a request to the proxy's own health path got back: the status line, or why none came.
async fn health(proxy: &Running) -> Result<String, String> {
    let mut s = TcpStream::connect(proxy.addr)
        .await
        .map_err(|e| e.to_string())?;
    s.write_all(b"GET /_llmctl/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out))
        .await
        .map_err(|_| "no answer within 5 s".to_string())?
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out).to_string();
    Ok(text.lines().next().unwrap_or("").to_string())
}

async fn metric(proxy: &Running, name: &str) -> f64 {
    let body = reqwest_like(proxy, "/_llmctl/metrics").await;
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
        .unwrap_or_else(|| panic!("{name} in the proxy's metrics:\n{body}"))
}

async fn reqwest_like(proxy: &Running, path: &str) -> String {
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .expect("write");
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).to_string()
}

/// Whether the proxy closed `s` (it reads the end, or an error).
async fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue, // an error answer before the close
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_are_closed_at_the_header_deadline() {
    let daemon = Daemon::start("");
    let p = proxy(&daemon, "header_timeout = \"1s\"").await;
    let mut slow = Vec::new();
    for _ in 0..200 {
        let mut s = TcpStream::connect(p.addr).await.expect("connect");
        s.write_all(b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Ty")
            .await
            .expect("write");
        slow.push(s);
    }
    let t = Instant::now();
    // Meanwhile a client that sends its request whole is served.
    assert_eq!(health(&p).await.as_deref(), Ok("HTTP/1.1 200 OK"));
    for s in &mut slow {
        assert!(
            closed_within(s, Duration::from_secs(10)).await,
            "a half-sent request still open {:?} after it began",
            t.elapsed()
        );
    }
    let took = t.elapsed();
    println!("200 half-sent requests closed {took:?} after they stopped (header_timeout 1s)");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_past_the_bound_give_way_to_a_new_client() {
    let daemon = Daemon::start("");
    let p = proxy(&daemon, "max_connections = 50").await;
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(TcpStream::connect(p.addr).await.expect("connect"));
    }
    // Every one was taken in; the oldest idle ones were closed to make room.
    let t = Instant::now();
    assert_eq!(health(&p).await.as_deref(), Ok("HTTP/1.1 200 OK"));
    let served = t.elapsed();
    println!("a new client served in {served:?} beside 200 idle connections (max_connections 50)");
    assert!(served < Duration::from_secs(1), "{served:?}");
    let open = metric(&p, "llmctl_proxy_connections").await;
    assert!(open <= 50.0, "{open} connections open past the bound of 50");
    let mut closed = 0;
    for s in &mut idle {
        if closed_within(s, Duration::from_millis(50)).await {
            closed += 1;
        }
    }
    assert!(
        closed >= 150,
        "the oldest idle connections were closed: {closed} of 200"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_beyond_their_bounds_are_refused_and_the_proxy_serves_on() {
    let daemon = Daemon::start("");
    let p = proxy(&daemon, "max_header_bytes = 16384\nmax_headers = 20").await;
    let huge = format!(
        "GET /_llmctl/health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(64 << 10)
    );
    let many: String = (0..50).map(|i| format!("X-H{i}: v\r\n")).collect();
    let many = format!("GET /_llmctl/health HTTP/1.1\r\nHost: x\r\n{many}\r\n");
    for (what, req) in [("64 KiB of headers", huge), ("50 headers", many)] {
        let mut s = TcpStream::connect(p.addr).await.expect("connect");
        let _ = s.write_all(req.as_bytes()).await;
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
        let status = String::from_utf8_lossy(&out)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        assert!(
            status.is_empty() || status.contains(" 431 ") || status.contains(" 400 "),
            "{what} answered {status:?}"
        );
        assert!(!status.contains(" 200 "), "{what} was served");
    }
    assert_eq!(health(&p).await.as_deref(), Ok("HTTP/1.1 200 OK"));
}
