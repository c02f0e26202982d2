//! Bad input gets a clear status (or exit code) and the daemon keeps serving.

use crate::harness::*;
use llmctl_client::pb;
use tonic::Code;

async fn acquire_code(d: &Daemon, req: pb::AcquireRequest) -> (Code, String) {
    let e = d
        .client()
        .await
        .acquire(req)
        .await
        .expect_err("should be refused");
    (e.code(), e.message().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_input_gets_its_status() {
    let d = Daemon::start("[daemon]\nmax_keys = 20\n[keys.\"small\"]\ntokens_per_minute = 1000\n");
    let base = acquire_req("k");
    let cases: Vec<(pb::AcquireRequest, &str)> = vec![
        (
            pb::AcquireRequest {
                key: String::new(),
                ..base.clone()
            },
            "empty",
        ),
        (
            pb::AcquireRequest {
                key: "x".repeat(257),
                ..base.clone()
            },
            "257 bytes",
        ),
        (
            pb::AcquireRequest {
                key: "a\u{7}b".into(),
                ..base.clone()
            },
            "control",
        ),
        (
            pb::AcquireRequest {
                input_tokens: -1,
                ..base.clone()
            },
            "input_tokens = -1",
        ),
        (
            pb::AcquireRequest {
                output_tokens: 1_000_000_001,
                ..base.clone()
            },
            "output_tokens",
        ),
        (
            pb::AcquireRequest {
                requests: -2,
                ..base.clone()
            },
            "requests",
        ),
        (
            pb::AcquireRequest {
                max_wait_ms: 3_600_001,
                ..base.clone()
            },
            "1 hour",
        ),
        (
            pb::AcquireRequest {
                max_wait_ms: -1,
                ..base.clone()
            },
            "negative",
        ),
    ];
    for (req, needle) in cases {
        let (code, msg) = acquire_code(&d, req).await;
        assert_eq!(code, Code::InvalidArgument, "{needle}: {msg}");
        assert!(msg.contains(needle), "{msg:?} should mention {needle:?}");
    }

    let (code, msg) = acquire_code(
        &d,
        pb::AcquireRequest {
            input_tokens: 5000,
            ..acquire_req("small/m")
        },
    )
    .await;
    assert_eq!(code, Code::FailedPrecondition, "{msg}");
    assert!(
        msg.contains("5000") && msg.contains("1000") && msg.contains("burst_tokens"),
        "{msg}"
    );

    let mut c = d.client().await;
    let e = c
        .report(report_req("0123456789abcdef", 200))
        .await
        .expect_err("unknown lease");
    assert_eq!(e.code(), Code::NotFound);
    assert!(e.message().contains("0123456789abcdef"));
    let lease = c
        .acquire(acquire_req("k"))
        .await
        .expect("acquire")
        .into_inner()
        .lease_id;
    c.report(report_req(&lease, 200))
        .await
        .expect("first report");
    let e = c
        .report(report_req(&lease, 200))
        .await
        .expect_err("settled");
    assert_eq!(e.code(), Code::NotFound);

    let lease = c
        .acquire(acquire_req("k"))
        .await
        .expect("acquire")
        .into_inner()
        .lease_id;
    let mut many = report_req(&lease, 200);
    for i in 0..65 {
        many.headers.insert(format!("x-h-{i}"), "v".into());
    }
    let e = c.report(many).await.expect_err("65 headers");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("65 headers"), "{}", e.message());
    let mut big = report_req(&lease, 200);
    big.headers.insert("x-big".into(), "v".repeat(5000));
    let e = c.report(big).await.expect_err("big header");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("x-big"), "{}", e.message());
    let mut neg = report_req(&lease, 200);
    neg.output_tokens = -5;
    let e = c.report(neg).await.expect_err("negative usage");
    assert_eq!(e.code(), Code::InvalidArgument);
    // Nothing was lost: the lease can still be reported.
    c.report(report_req(&lease, 200))
        .await
        .expect("report after refusals");

    let e = c
        .cooldown(pb::CooldownRequest {
            key: "k".into(),
            duration_ms: -5,
            reason: String::new(),
        })
        .await
        .expect_err("negative cooldown");
    assert_eq!(e.code(), Code::InvalidArgument);

    // The daemon's own bound on keys.
    let mut last = None;
    for i in 0..25 {
        if let Err(e) = c.acquire(acquire_req(&format!("many/{i}"))).await {
            last = Some(e);
            break;
        }
    }
    let e = last.expect("max_keys reached");
    assert_eq!(e.code(), Code::ResourceExhausted);
    assert!(e.message().contains("max_keys"), "{}", e.message());

    // Still serving.
    c.status(pb::StatusRequest::default())
        .await
        .expect("status after bad input");
    let o = d.cli(&["acquire", "k", "--input-tokens", "-3"]);
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
    let o = d.cli(&["report", "nope", "--status", "200"]);
    assert_eq!(o.status.code(), Some(66), "{}", stderr(&o));
    let o = d.cli(&["report", "nope", "--status", "200", "--header", "no-colon"]);
    assert_eq!(o.status.code(), Some(64));
    assert!(stderr(&o).contains("name: value"), "{}", stderr(&o));
    let o = d.cli(&["acquire", "k", "--max-wait", "soon"]);
    assert_eq!(o.status.code(), Some(2), "clap rejects a bad duration");
    assert!(stderr(&o).contains("250ms"), "{}", stderr(&o));
}

#[test]
fn a_malformed_config_exits_64_naming_file_key_and_value() {
    let dir = tempfile::tempdir().expect("tmp");
    let cases = [
        (
            "[keys.\"a\"]\nrequests_per_minute = 600\ntokens_per_minit = 5\n",
            "tokens_per_minit",
        ),
        (
            "[keys.\"a\"]\nrequests_per_minute = -600\n",
            "requests_per_minute = -600",
        ),
        (
            "[keys.\"a\"]\noutput_counted_as = \"sometimes\"\n",
            "sometimes",
        ),
        (
            "[keys.\"a\"]\nprovider = \"opneai\"\n",
            "provider = \"opneai\"",
        ),
        (
            "[keys.\"a\"]\nramp_up = \"slowly\"\n",
            "ramp_up = \"slowly\"",
        ),
        ("[daemon]\nlease_ttl = \"ten minutes\"\n", "lease_ttl"),
        ("this is not toml", "config"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("bad{i}.toml"));
        std::fs::write(&path, text).expect("write");
        let o = std::process::Command::new(BIN)
            .args(["daemon", "--config"])
            .arg(&path)
            .arg("--socket")
            .arg(dir.path().join(format!("s{i}.sock")))
            .arg("--data-dir")
            .arg(dir.path().join(format!("d{i}")))
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(64), "{text}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(&format!("bad{i}.toml")) && err.contains(needle),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
    let o = std::process::Command::new(BIN)
        .args(["daemon", "--config", "/nonexistent/llmctl.toml"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(64));
    assert!(stderr(&o).contains("/nonexistent/llmctl.toml"));
}

#[test]
fn no_daemon_running_exits_69_naming_the_socket() {
    let dir = tempfile::tempdir().expect("tmp");
    let socket = dir.path().join("none.sock");
    for args in [
        vec!["status"],
        vec!["acquire", "k"],
        vec!["cooldown", "k", "1s"],
        vec!["report", "x", "--status", "200"],
    ] {
        let o = cli_on(&socket, &args);
        assert_eq!(o.status.code(), Some(69), "{args:?}");
        let err = stderr(&o);
        assert!(
            err.contains(&socket.display().to_string()) && err.contains("llmctl daemon"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1);
    }
    // A socket file with nobody behind it.
    drop(std::os::unix::net::UnixListener::bind(&socket).expect("bind"));
    let o = cli_on(&socket, &["status"]);
    assert_eq!(o.status.code(), Some(69), "{}", stderr(&o));
}
