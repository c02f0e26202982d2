//! One daemon per socket, stale sockets, permissions, signals.

use crate::harness::*;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::Duration;

#[test]
fn a_second_daemon_on_the_same_socket_exits_with_a_clear_message() {
    let d = Daemon::start("");
    let o = Command::new(BIN)
        .arg("daemon")
        .arg("--socket")
        .arg(&d.socket)
        .arg("--data-dir")
        .arg(d.dir.path().join("other-state"))
        .arg("--config")
        .arg(&d.config)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(73));
    let err = stderr(&o);
    assert!(
        err.contains("already serving") && err.contains(&d.socket.display().to_string()),
        "{err}"
    );
    // The first one is unharmed.
    assert!(d.cli(&["status"]).status.success());
}

#[test]
fn socket_folder_0700_and_socket_0600() {
    let d = Daemon::start("");
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&d.socket), 0o600);
    assert_eq!(mode(d.socket.parent().expect("folder")), 0o700);
}

#[test]
fn an_existing_socket_folder_of_ours_is_opened_to_the_socket_group() {
    // As systemd's RuntimeDirectory makes it: the daemon's own, 0700, another group.
    let dir = tempfile::tempdir().expect("tmp");
    let run = dir.path().join("run");
    std::fs::create_dir(&run).expect("mkdir");
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let socket = run.join("llmctl.sock");
    let mut child = Command::new(BIN)
        .args(["daemon", "--socket-group", "65534", "--socket"])
        .arg(&socket)
        .arg("--data-dir")
        .arg(dir.path().join("state"))
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    wait_until(Duration::from_secs(10), "the socket", || socket.exists());
    use std::os::unix::fs::MetadataExt;
    let folder = std::fs::metadata(&run).expect("folder");
    let sock = std::fs::metadata(&socket).expect("socket");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!((folder.gid(), folder.mode() & 0o777), (65534, 0o750));
    assert_eq!((sock.gid(), sock.mode() & 0o777), (65534, 0o660));
}

#[test]
fn the_data_dir_is_0700_and_its_files_0600() {
    let mut d = Daemon::start("");
    d.cli(&["cooldown", "k", "1m"]);
    d.terminate();
    let mode = |p: &std::path::Path| {
        std::fs::symlink_metadata(p)
            .expect("stat")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&d.data), 0o700);
    for e in std::fs::read_dir(&d.data).expect("data") {
        let p = e.expect("entry").path();
        let m = mode(&p);
        assert!(m & 0o077 == 0, "{} is {m:o}", p.display());
    }
}

/// Runs a daemon on `socket` until it exits (it must refuse to start).
fn refused(socket: &std::path::Path, data: &std::path::Path) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .arg("daemon")
        .arg("--socket")
        .arg(socket)
        .arg("--data-dir")
        .arg(data)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the daemon started on {}", socket.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (out.status.code(), stderr(&out))
}

#[test]
fn a_socket_folder_others_could_tamper_with_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = dir.path().join("state");
    // Open to everyone, as a folder another user made in /tmp would be.
    let open = dir.path().join("open");
    std::fs::create_dir(&open).expect("mkdir");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let (code, msg) = refused(&open.join("llmctl.sock"), &data);
    assert_eq!(code, Some(73), "{msg}");
    assert!(msg.contains("others may write in it"), "{msg}");
    // A symbolic link to a folder elsewhere.
    let real = dir.path().join("real");
    std::fs::create_dir(&real).expect("mkdir");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let (code, msg) = refused(&link.join("llmctl.sock"), &data);
    assert_eq!(code, Some(73), "{msg}");
    assert!(msg.contains("symbolic link"), "{msg}");
    // The lock file as a dangling link: never followed, nothing created at its target.
    let target = dir.path().join("created-through-the-link");
    std::os::unix::fs::symlink(&target, real.join("llmctl.sock.lock")).expect("symlink");
    let (code, msg) = refused(&real.join("llmctl.sock"), &data);
    assert_eq!(code, Some(73), "{msg}");
    assert!(!target.exists(), "the lock followed a symbolic link");
    // A regular file where the socket goes is refused, not deleted.
    std::fs::remove_file(real.join("llmctl.sock.lock")).expect("rm");
    let file = real.join("llmctl.sock");
    std::fs::write(&file, "precious").expect("write");
    let (code, msg) = refused(&file, &data);
    assert_eq!(code, Some(73), "{msg}");
    assert!(msg.contains("not a socket"), "{msg}");
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), "precious");
}

#[test]
fn a_stale_socket_is_replaced_but_a_live_one_is_not() {
    let dir = tempfile::tempdir().expect("tmp");
    let socket = dir.path().join("s.sock");
    // Stale: a socket file nobody listens on.
    drop(std::os::unix::net::UnixListener::bind(&socket).expect("bind"));
    let start = |socket: &std::path::Path| {
        Command::new(BIN)
            .arg("daemon")
            .arg("--socket")
            .arg(socket)
            .arg("--data-dir")
            .arg(dir.path().join("state"))
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let mut child = start(&socket);
    wait_until(
        std::time::Duration::from_secs(10),
        "the daemon to replace the stale socket",
        || cli_on(&socket, &["status"]).status.success(),
    );
    let _ = child.kill();
    let _ = child.wait();

    // Live: something answers there (not a daemon of ours, no lock held).
    let live = dir.path().join("live.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&live).expect("bind");
    let o = start(&live).wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(73));
    assert!(stderr(&o).contains("already answering"), "{}", stderr(&o));
    assert!(live.exists(), "a live socket must not be removed");
}

fn signal(d: &Daemon, name: &str) {
    let pid = d.child.as_ref().expect("running").id().to_string();
    let ok = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid])
        .status()
        .expect("kill");
    assert!(ok.success());
}

fn requests_limit(d: &Daemon, key: &str) -> Option<f64> {
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&d.cli(&["status", "--json"]))).expect("json");
    v["keys"].as_array()?.iter().find(|k| k["key"] == key)?["buckets"]
        .as_array()?
        .iter()
        .find(|b| b["dimension"] == "requests")?["limit"]
        .as_f64()
}

#[test]
fn sighup_reloads_the_config_and_keeps_the_old_one_when_the_new_is_bad() {
    let mut d = Daemon::start("[keys.\"k\"]\nrequests_per_minute = 60\n");
    assert_eq!(requests_limit(&d, "k"), Some(60.0));
    let lease = stdout(&d.cli(&["acquire", "k", "--max-wait", "5s"]));
    std::fs::write(
        &d.config,
        "[keys.\"k\"]\nrequests_per_minute = 600\n[keys.\"n\"]\nrequests_per_minute = 120\n",
    )
    .expect("write");
    signal(&d, "HUP");
    wait_until(Duration::from_secs(10), "the new limit", || {
        requests_limit(&d, "k") == Some(600.0)
    });
    assert_eq!(requests_limit(&d, "n"), Some(120.0));
    // What was granted before the reload is still known.
    let o = d.cli(&["report", &lease, "--status", "200"]);
    assert!(o.status.success(), "{}", stderr(&o));

    std::fs::write(&d.config, "[keys.\"k\"]\nrequests_per_minute = -1\n").expect("write");
    signal(&d, "HUP");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        requests_limit(&d, "k"),
        Some(600.0),
        "a bad config changes nothing"
    );
    let out = d.terminate();
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("config not reloaded, the running one is kept")
            && log.contains("requests_per_minute"),
        "{log}"
    );
}

#[test]
fn sigquit_stops_cleanly_and_flushes() {
    let mut d = Daemon::start("");
    d.cli(&["cooldown", "q", "10m", "--reason", "kept over SIGQUIT"]);
    signal(&d, "QUIT");
    let child = d.child.take().expect("running");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    d.restart();
    let o = d.cli(&["status"]);
    assert!(stdout(&o).contains("kept over SIGQUIT"), "{}", stdout(&o));
}

#[test]
fn idle_exit_stops_a_daemon_with_nothing_to_do_and_not_one_holding_a_lease() {
    let dir = tempfile::tempdir().expect("tmp");
    let socket = dir.path().join("s.sock");
    let mut child = Command::new(BIN)
        .args(["daemon", "--idle-exit", "1s", "--socket"])
        .arg(&socket)
        .arg("--data-dir")
        .arg(dir.path().join("state"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the daemon");
    wait_until(Duration::from_secs(20), "the daemon's socket", || {
        cli_on(&socket, &["status"]).status.success()
    });
    // A client without a session making short calls keeps it up too.
    let began = std::time::Instant::now();
    while began.elapsed() < Duration::from_millis(2500) {
        let l = stdout(&cli_on(&socket, &["acquire", "k", "--max-wait", "10s"]))
            .trim()
            .to_string();
        assert!(
            cli_on(&socket, &["report", &l, "--status", "200"])
                .status
                .success(),
            "the daemon stopped under a client calling it"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(
        child.try_wait().expect("wait").is_none(),
        "stopped between calls"
    );
    // A lease held keeps it up well past its idle bound.
    let lease = stdout(&cli_on(&socket, &["acquire", "k", "--max-wait", "10s"]))
        .trim()
        .to_string();
    assert_eq!(lease.len(), 32, "{lease:?}");
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        child.try_wait().expect("wait").is_none(),
        "stopped while a lease was held"
    );
    // Reported, nothing is left to do: it stops by itself, cleanly, within its bound.
    let reported = cli_on(&socket, &["report", &lease, "--status", "200"]);
    assert!(reported.status.success(), "{}", stderr(&reported));
    let began = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "still running 10 s after it was idle"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut log)
        .expect("log");
    assert!(log.contains("--idle-exit"), "{log}");
    assert!(!socket.exists(), "the socket was left behind");
    // A bound of nothing is a mistake, said at once.
    let zero = Command::new(BIN)
        .args(["daemon", "--idle-exit", "0s", "--socket"])
        .arg(&socket)
        .output()
        .expect("run");
    assert_eq!(zero.status.code(), Some(2), "{}", stderr(&zero));
    assert!(stderr(&zero).contains("--idle-exit 0"), "{}", stderr(&zero));
}
