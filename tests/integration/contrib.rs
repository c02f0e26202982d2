//! What an operator installs llmctl with: the systemd units, the container image, the
//! Kubernetes sidecar example. Each is checked as far as this machine allows.

use crate::harness::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn contrib(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("contrib")
        .join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(contrib(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs `llmctl daemon` with `args` (paths moved into a temporary folder) and a config that
/// cannot be read: it must get as far as reading the config, so every flag was understood.
fn flags_are_understood(args: &[String]) {
    let dir = tempfile::tempdir().expect("tmp");
    let mut args: Vec<String> = args
        .iter()
        .map(|a| {
            if a.starts_with('/') {
                dir.path()
                    .join(a.trim_start_matches('/'))
                    .display()
                    .to_string()
            } else {
                a.clone()
            }
        })
        .collect();
    args.extend(["--config".into(), "/nonexistent/llmctl.toml".into()]);
    let o = Command::new(BIN)
        .arg("daemon")
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(64), "{args:?}: {}", stderr(&o));
    assert!(
        stderr(&o).contains("/nonexistent/llmctl.toml"),
        "{}",
        stderr(&o)
    );
}

/// The arguments after `llmctl daemon` on an ExecStart line.
fn exec_start_args(unit: &str) -> Vec<String> {
    let line = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart");
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words.get(1), Some(&"daemon"), "{line}");
    words[2..]
        .iter()
        .map(|w| w.replace("%t", "/run/user").replace("%S", "/state"))
        .collect()
}

#[test]
fn the_systemd_units_verify_and_their_flags_are_understood() {
    let system = read("systemd/system/llmctl.service");
    let user = read("systemd/user/llmctl.service");
    for (unit, must) in [
        (
            &system,
            &[
                "RuntimeDirectory=llmctl",
                "StateDirectory=llmctl",
                "User=llmctl",
                "NoNewPrivileges=yes",
                "ProtectSystem=strict",
                "ExecReload=/bin/kill -HUP $MAINPID",
            ][..],
        ),
        (
            &user,
            &[
                "ExecReload=/bin/kill -HUP $MAINPID",
                "WantedBy=default.target",
            ][..],
        ),
    ] {
        for line in must {
            assert!(unit.lines().any(|l| l == *line), "missing {line}");
        }
        flags_are_understood(&exec_start_args(unit));
    }
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped `systemd-analyze verify`: systemd-analyze is not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    for (name, unit, from, user_mode) in [
        ("system", &system, "/usr/local/bin/llmctl", false),
        ("user", &user, "%h/.cargo/bin/llmctl", true),
    ] {
        // verify wants the binary to exist: the one under test stands in for the installed one.
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).expect("mkdir");
        let path = folder.join("llmctl.service");
        std::fs::write(&path, unit.replace(from, BIN)).expect("write");
        let mut cmd = Command::new("systemd-analyze");
        if user_mode {
            cmd.arg("--user").env("XDG_RUNTIME_DIR", &folder);
        }
        let o = cmd
            .arg("verify")
            .arg(&path)
            .output()
            .expect("systemd-analyze");
        assert!(
            o.status.success(),
            "{name} unit: {}{}",
            stdout(&o),
            stderr(&o)
        );
    }
}

#[test]
fn the_dockerfile_builds_in_two_stages_and_runs_the_daemon_unprivileged() {
    let text = read("docker/Dockerfile");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    assert_eq!(lines.iter().filter(|l| l.starts_with("FROM ")).count(), 2);
    assert!(lines
        .iter()
        .any(|l| l.contains("cargo build --locked --release")));
    let user = lines
        .iter()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("USER");
    assert!(
        !user.starts_with('0') && !user.starts_with("root"),
        "{user}"
    );
    let exposed: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("EXPOSE "))
        .flat_map(|l| l.split_whitespace())
        .collect();
    // The CMD's arguments, joined across continuation lines.
    let joined = text.replace("\\\n", " ");
    let cmd = joined
        .lines()
        .find_map(|l| l.strip_prefix("CMD "))
        .expect("CMD");
    let args: Vec<String> = serde_json::from_str(cmd.trim()).expect("CMD is a JSON array");
    for (flag, port) in [("--metrics-addr", "9464"), ("--health-addr", "9465")] {
        let at = args.iter().position(|a| a == flag).expect(flag);
        assert!(args[at + 1].ends_with(&format!(":{port}")), "{flag}");
        assert!(exposed.contains(&port), "{port} not exposed");
    }
    assert!(joined.contains(r#"ENTRYPOINT ["/usr/local/bin/llmctl", "daemon"]"#));
    flags_are_understood(&args);
}

#[test]
fn the_kubernetes_sidecar_shares_the_socket_and_probes_the_health_port() {
    let pod: serde_yaml::Value =
        serde_yaml::from_str(&read("k8s/sidecar.yaml")).expect("the YAML loads");
    let containers = pod["spec"]["containers"].as_sequence().expect("containers");
    let by_name = |n: &str| {
        containers
            .iter()
            .find(|c| c["name"] == n)
            .unwrap_or_else(|| panic!("no {n} container"))
    };
    let llmctl = by_name("llmctl");
    let app = by_name("app");
    let args: Vec<String> = llmctl["args"]
        .as_sequence()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("string").to_string())
        .collect();
    let arg = |flag: &str| {
        let at = args.iter().position(|a| a == flag).expect(flag);
        args[at + 1].clone()
    };
    let health_port: u64 = arg("--health-addr")
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("a port");
    for probe in ["readinessProbe", "livenessProbe"] {
        assert_eq!(
            llmctl[probe]["grpc"]["port"].as_u64(),
            Some(health_port),
            "{probe} probes the health port"
        );
    }
    let ports: Vec<u64> = llmctl["ports"]
        .as_sequence()
        .expect("ports")
        .iter()
        .filter_map(|p| p["containerPort"].as_u64())
        .collect();
    assert!(
        ports.contains(&health_port) && ports.contains(&9464),
        "{ports:?}"
    );
    // The app finds the socket where the daemon makes it, on a volume both mount.
    let socket = arg("--socket");
    let env = app["env"].as_sequence().expect("env");
    assert!(env
        .iter()
        .any(|e| e["name"] == "LLMCTL_SOCKET" && e["value"].as_str() == Some(&socket)));
    let mounted = |c: &serde_yaml::Value| -> Vec<(String, String)> {
        c["volumeMounts"]
            .as_sequence()
            .expect("mounts")
            .iter()
            .map(|m| {
                (
                    m["name"].as_str().expect("name").to_string(),
                    m["mountPath"].as_str().expect("path").to_string(),
                )
            })
            .collect()
    };
    let shared = mounted(app)
        .into_iter()
        .find(|m| mounted(llmctl).contains(m) && socket.starts_with(&format!("{}/", m.1)))
        .expect("a volume holding the socket mounted in both");
    // The daemon makes the socket's folder itself (0750 for the group), inside the volume.
    assert_ne!(Path::new(&socket).parent(), Some(Path::new(&shared.1)));
    flags_are_understood(&args);
}
