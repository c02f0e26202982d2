//! One daemon per socket, stale sockets, permissions.

use crate::harness::*;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

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
