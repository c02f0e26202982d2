//! What a local process must not be able to do to `llmctl proxy`: hold connections open by
//! sending half a request, crowd out a new client with idle connections, or send headers
//! without bound. Each bound is a `[proxy]` setting, small here so the test stays small.

use crate::harness::{eventually, Daemon};
use llmctl_proxy::{ProxyConfig, Running};
use std::sync::Arc;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_users_idle_connections_give_way_to_their_own_new_one() {
    let daemon = Daemon::start("");
    let p = proxy(&daemon, "max_connections_per_uid = 20").await;
    let mut idle = Vec::new();
    for _ in 0..50 {
        idle.push(TcpStream::connect(p.addr).await.expect("connect"));
    }
    // This test's uid holds at most 20; its new connection is served.
    assert_eq!(health(&p).await.as_deref(), Ok("HTTP/1.1 200 OK"));
    // Counted as each closed connection's task ends.
    eventually(
        Duration::from_secs(10),
        "at most 20 of one user open",
        || async { metric(&p, "llmctl_proxy_connections").await <= 20.0 },
    )
    .await;
    eventually(
        Duration::from_secs(10),
        "30 closed for new ones",
        || async {
            metric(
                &p,
                "llmctl_proxy_connections_closed_total{reason=\"crowded\"}",
            )
            .await
                >= 30.0
        },
    )
    .await;
    // The same figures at Prometheus' usual path.
    let at_metrics = reqwest_like(&p, "/metrics").await;
    assert!(
        at_metrics.contains("llmctl_proxy_connections_closed_total{reason=\"crowded\"}"),
        "{at_metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_at_their_deadlines() {
    let daemon = Daemon::start("");
    let p = proxy(&daemon, "header_timeout = \"1s\"\nidle_timeout = \"5s\"").await;
    // One that never sends a request: closed at the header deadline.
    let mut silent = TcpStream::connect(p.addr).await.expect("connect");
    let t = Instant::now();
    assert!(closed_within(&mut silent, Duration::from_secs(10)).await);
    let silent_closed = t.elapsed();
    assert!(
        silent_closed >= Duration::from_millis(900),
        "{silent_closed:?}"
    );
    // One kept alive after a request, over HTTP/2: open until idle_timeout, then closed.
    let h2 = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http2_only(true)
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let answer = h2
        .get(
            format!("http://{}/_llmctl/health", p.addr)
                .parse()
                .expect("uri"),
        )
        .await
        .expect("an HTTP/2 answer");
    assert_eq!(answer.status(), 200);
    drop(answer);
    let t = Instant::now();
    tokio::time::sleep(Duration::from_millis(2000)).await;
    // The HTTP/2 connection, and the one asking for the metrics.
    assert_eq!(
        metric(&p, "llmctl_proxy_connections").await,
        2.0,
        "closed before its deadline"
    );
    eventually(
        Duration::from_secs(10),
        "the idle HTTP/2 connection closed",
        || async { metric(&p, "llmctl_proxy_connections").await == 1.0 },
    )
    .await;
    println!(
        "closed after {silent_closed:?} (never a request) and {:?} (HTTP/2, idle after its answer)",
        t.elapsed()
    );
    assert!(metric(&p, "llmctl_proxy_connections_closed_total{reason=\"idle\"}").await >= 1.0);
}

/// An upstream that answers at once: each request's body read and dropped, a chat completion
/// with its usage answered, connections kept alive.
async fn instant_upstream() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut s = tokio::io::BufReader::new(s);
                loop {
                    let mut length = 0usize;
                    loop {
                        let mut line = String::new();
                        match tokio::io::AsyncBufReadExt::read_line(&mut s, &mut line).await {
                            Ok(0) | Err(_) => return,
                            Ok(_) => {}
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some((k, v)) = line.split_once(':') {
                            if k.eq_ignore_ascii_case("content-length") {
                                length = v.trim().parse().unwrap_or(0);
                            }
                        }
                    }
                    let mut left = length;
                    let mut buf = vec![0u8; 64 << 10];
                    while left > 0 {
                        let n = left.min(buf.len());
                        if s.read_exact(&mut buf[..n]).await.is_err() {
                            return;
                        }
                        left -= n;
                    }
                    let body = r#"{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}"#;
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if s.get_mut().write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// `llmctl proxy` as its own process (its memory is measured), `up` routed to `upstream`.
struct ProxyProcess {
    child: std::process::Child,
    addr: std::net::SocketAddr,
}

impl ProxyProcess {
    fn start(daemon: &Daemon, upstream: std::net::SocketAddr, extra: &str) -> ProxyProcess {
        let port = crate::harness::free_port();
        let config = daemon.dir.path().join("proxy-abuse.toml");
        std::fs::write(
            &config,
            format!("[proxy]\nlisten = \"127.0.0.1:{port}\"\n{extra}\n[proxy.upstreams.up]\nurl = \"http://{upstream}\"\napi = \"openai\"\n"),
        )
        .expect("config");
        let child = std::process::Command::new(crate::harness::BIN)
            .args(["proxy", "--config"])
            .arg(&config)
            .arg("--socket")
            .arg(&daemon.socket)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("llmctl proxy");
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        crate::harness::wait_until(Duration::from_secs(30), "the proxy listens", || {
            std::net::TcpStream::connect(addr).is_ok()
        });
        ProxyProcess { child, addr }
    }

    /// The most memory the process has held (VmHWM), in MiB.
    fn peak_rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the proxy's status");
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM");
        kib / 1024.0
    }
}

impl Drop for ProxyProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One limited request of `size` bytes sent over `spread`, in pieces; its answer's status (0
/// when none came).
async fn slow_upload(addr: std::net::SocketAddr, size: usize, spread: Duration) -> u16 {
    send_body(addr, "", size, false, spread).await.0
}

/// 64 connections each uploading 30 MiB slowly to a limited route, small calls beside them:
/// the proxy's memory, the small calls' slowest answer, and the uploads' statuses.
async fn slow_uploads(
    daemon: &Daemon,
    uploads: usize,
    size: usize,
    spread: Duration,
    extra: &str,
) -> (f64, Duration, Vec<u16>) {
    let upstream = instant_upstream().await;
    let p = ProxyProcess::start(daemon, upstream, extra);
    let addr = p.addr;
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let small = {
        let done = done.clone();
        tokio::spawn(async move {
            let mut slowest = Duration::ZERO;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let t = Instant::now();
                let status = slow_upload(addr, 200, Duration::ZERO).await;
                assert_eq!(status, 200, "a small call beside the uploads");
                slowest = slowest.max(t.elapsed());
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            slowest
        })
    };
    let all: Vec<_> = (0..uploads)
        .map(|_| tokio::spawn(slow_upload(addr, size, spread)))
        .collect();
    let mut statuses = Vec::new();
    for u in all {
        statuses.push(u.await.expect("an upload"));
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let slowest = small.await.expect("the small calls");
    (p.peak_rss_mib(), slowest, statuses)
}

fn upload_figure(what: &str, (rss, slowest, statuses): &(f64, Duration, Vec<u16>)) -> String {
    let ok = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 503).count();
    format!(
        "{what}: proxy peak RSS {rss:.0} MiB; small calls answered within {slowest:?} throughout; uploads {ok} answered 200, {refused} 503 (room for their bodies did not come within their wait), {} otherwise",
        statuses.len() - ok - refused
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_uploads_hold_no_more_than_the_body_budget_and_small_calls_pass_beside_them() {
    let daemon = Daemon::start("");
    // 16 uploads of 16 MiB on a budget of 128 MiB (two at a time, each with room for its
    // parse): unbounded, the proxy would hold 256 MiB of bodies and as much again parsed.
    let figures = slow_uploads(
        &daemon,
        16,
        16 << 20,
        Duration::from_secs(1),
        "max_body_memory = \"128MiB\"",
    )
    .await;
    println!(
        "{}",
        upload_figure(
            "16 slow uploads of 16 MiB, max_body_memory 128 MiB",
            &figures
        )
    );
    let (rss, _, statuses) = &figures;
    assert!(*rss < 128.0 + 64.0, "the proxy held {rss:.0} MiB");
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 503),
        "{statuses:?}"
    );
    assert!(statuses.contains(&200), "{statuses:?}");
}

/// The figures (run by `scripts/abuse-figures proxy`, release build), each row of the abuse
/// table on the default bounds: 2,000 idle connections, 200 half-sent requests, 64 slow
/// uploads of 30 MiB with small calls beside them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "figures: scripts/abuse-figures proxy"]
async fn figure_proxy_abuse() {
    let daemon = Daemon::start("");
    {
        let p = proxy(&daemon, "").await;
        let mut idle = Vec::new();
        for _ in 0..2000 {
            match TcpStream::connect(p.addr).await {
                Ok(s) => idle.push(s),
                Err(e) => panic!(
                    "connection {} of 2000: {e} (raise the open-file limit: ulimit -n 8192)",
                    idle.len()
                ),
            }
        }
        let t = Instant::now();
        let served = health(&p).await;
        let took = t.elapsed();
        let open = metric(&p, "llmctl_proxy_connections").await;
        println!("figure: 2000 idle connections: a new client answered {served:?} in {took:?}; {open} connections open (max_connections 1024)");
        let t = Instant::now();
        for s in &mut idle {
            assert!(closed_within(s, Duration::from_secs(30)).await);
        }
        println!("figure: 2000 idle connections: every one closed {:?} after they opened (header_timeout 10 s, or the oldest idle for a new one)", t.elapsed());
    }
    {
        let p = proxy(&daemon, "").await;
        let mut slow = Vec::new();
        for _ in 0..200 {
            let mut s = TcpStream::connect(p.addr).await.expect("connect");
            s.write_all(b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Ty")
                .await
                .expect("write");
            slow.push(s);
        }
        let t = Instant::now();
        let served = health(&p).await;
        let took = t.elapsed();
        for s in &mut slow {
            assert!(closed_within(s, Duration::from_secs(30)).await);
        }
        println!("figure: 200 half-sent requests: every one closed {:?} after (header_timeout 10 s); a whole request beside them answered {served:?} in {took:?}", t.elapsed());
    }
    let figures = slow_uploads(&daemon, 64, 30 << 20, Duration::from_secs(10), "").await;
    println!(
        "figure: {}",
        upload_figure("64 slow uploads of 30 MiB (each over 10 s)", &figures)
    );
}

/// A request body sent by hand (content-length, or chunked in one chunk a piece), in pieces over
/// `spread`: the answer's status and `retry-after`.
async fn send_body(
    addr: std::net::SocketAddr,
    extra: &str,
    size: usize,
    chunked: bool,
    spread: Duration,
) -> (u16, Option<String>) {
    let head = r#"{"model":"m","max_tokens":8,"messages":[{"role":"user","content":""#;
    let tail = r#""}]}"#;
    let filler_len = size - head.len() - tail.len();
    let Ok(mut s) = TcpStream::connect(addr).await else {
        return (0, None);
    };
    let framing = if chunked {
        "Transfer-Encoding: chunked".to_string()
    } else {
        format!("Content-Length: {size}")
    };
    let request = format!(
        "POST /up/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{extra}{framing}\r\nConnection: close\r\n\r\n"
    );
    if s.write_all(request.as_bytes()).await.is_err() {
        return (0, None);
    }
    let (mut reader, mut writer) = s.into_split();
    let send = async move {
        const PIECE: usize = 256 << 10;
        let filler = vec![b'x'; PIECE];
        // The body's pieces: its head, the filler a piece at a time, its tail.
        let pieces = filler_len.div_ceil(PIECE) + 2;
        let pause = spread / pieces as u32;
        let mut left = filler_len;
        for i in 0..pieces {
            let part: &[u8] = if i == 0 {
                head.as_bytes()
            } else if i == pieces - 1 {
                tail.as_bytes()
            } else {
                let n = left.min(PIECE);
                left -= n;
                &filler[..n]
            };
            let sent = if chunked {
                let mut f = format!("{:x}\r\n", part.len()).into_bytes();
                f.extend_from_slice(part);
                f.extend_from_slice(b"\r\n");
                writer.write_all(&f).await
            } else {
                writer.write_all(part).await
            };
            if sent.is_err() {
                return writer;
            }
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
        }
        if chunked {
            let _ = writer.write_all(b"0\r\n\r\n").await;
        }
        // Kept open until the answer is read: a client's half-close reads as it going away.
        writer
    };
    let read = async move {
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(120), reader.read_to_end(&mut out)).await;
        let text = String::from_utf8_lossy(&out).to_string();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0u16);

        let retry = text.lines().find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("retry-after:")
                .map(|v| v.trim().to_string())
        });
        (status, retry)
    };
    let (writer, answer) = tokio::join!(send, read);
    drop(writer);
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_with_no_room_waits_then_gets_503_and_every_byte_of_room_comes_back() {
    let daemon = Daemon::start("");
    let upstream = instant_upstream().await;
    let text = format!(
        "[proxy]\nlisten = \"127.0.0.1:0\"\nmax_body_memory = \"16MiB\"\nmax_body_bytes = \"4MiB\"\n[proxy.upstreams.up]\nurl = \"http://{upstream}\"\napi = \"openai\"\n"
    );
    let p = Running::start(
        ProxyConfig::parse(&text, "t").expect("config"),
        daemon.socket.clone(),
    )
    .await
    .expect("proxy");
    let addr = p.addr;
    // A 4 MiB upload holds room for itself and its parse (12 of the 14 MiB a large request may
    // have) while it arrives, over 4 s.
    let first = tokio::spawn(send_body(addr, "", 4 << 20, false, Duration::from_secs(4)));
    eventually(
        Duration::from_secs(10),
        "the first upload holds its room",
        || async { metric(&p, "llmctl_proxy_body_bytes_held").await >= (12 << 20) as f64 },
    )
    .await;
    // A second waits its wait (x-llmctl-max-wait) for room, then is refused, its body read and
    // dropped so that it reads the answer.
    let (status, retry) = send_body(
        addr,
        "x-llmctl-max-wait: 1\r\n",
        3 << 20,
        false,
        Duration::ZERO,
    )
    .await;
    assert_eq!((status, retry.as_deref()), (503, Some("1")));
    assert!(metric(&p, "llmctl_proxy_refusals_total{reason=\"body_memory\"}").await >= 1.0);
    // A small one is served beside it.
    assert_eq!(
        send_body(addr, "", 2000, false, Duration::ZERO).await.0,
        200
    );
    assert_eq!(first.await.expect("first").0, 200);
    // A chunked body past max_body_bytes is a 413, read to its end; one within it is served.
    assert_eq!(
        send_body(addr, "", 5 << 20, true, Duration::ZERO).await.0,
        413
    );
    assert_eq!(
        send_body(addr, "", 1 << 20, true, Duration::ZERO).await.0,
        200
    );
    eventually(
        Duration::from_secs(10),
        "every byte of room given back",
        || async { metric(&p, "llmctl_proxy_body_bytes_held").await == 0.0 },
    )
    .await;
}
