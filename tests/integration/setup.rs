//! Installing and checking: `--version`, completions, the manual page, `config check`.

use crate::harness::*;
use std::process::{Command, Stdio};

fn run(args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run llmctl")
}

#[test]
fn version_names_the_revision() {
    let o = run(&["--version"]);
    let v = stdout(&o);
    assert!(
        v.starts_with(&format!("llmctl {} (", env!("CARGO_PKG_VERSION"))) && v.ends_with(')'),
        "{v}"
    );
}

#[test]
fn completions_and_the_manual_page_are_generated() {
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        assert!(
            script.contains("llmctl") && script.contains("acquire"),
            "{shell}"
        );
        if shell == "bash" {
            let path =
                std::env::temp_dir().join(format!("llmctl-completion-{}", std::process::id()));
            std::fs::write(&path, &script).expect("write");
            let checked = Command::new("bash").arg("-n").arg(&path).status();
            let _ = std::fs::remove_file(&path);
            if let Ok(s) = checked {
                assert!(s.success(), "bash cannot read the completion script");
            }
        }
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
    let o = run(&["man"]);
    let page = stdout(&o);
    assert!(
        page.contains(".TH llmctl 1") && page.contains("daemon"),
        "{page}"
    );
}

#[test]
fn config_check_says_what_the_daemon_would_and_prints_the_limits() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/config.example.toml");
    let o = run(&["config", "check", example]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    // `--config FILE`, as `daemon`, `proxy` and `exec` take it, says the same.
    let flagged = run(&["config", "check", "--config", example]);
    assert!(flagged.status.success(), "{}", stderr(&flagged));
    assert_eq!(stdout(&flagged), text);
    assert!(text.contains(": ok"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("openai/gpt-5.5 ") && l.contains("requests 5000/minute")),
        "{text}"
    );
    let dir = tempfile::tempdir().expect("tmp");
    for (name, body) in [
        ("range.toml", "[keys.\"k\"]\nrequests_per_minute = -1\n"),
        (
            "unknown.toml",
            "[keys.\"k\"]\nrequests_per_minute = 60\nshiny = true\n",
        ),
        (
            "profile.toml",
            "[keys.\"k\"]\nrequests_per_minute = 60\nprofile = \"nope\"\n",
        ),
        (
            "type.toml",
            "[keys.\"k\"]\nrequests_per_minute = \"many\"\n",
        ),
        ("typo.toml", "[keys.\"k\"]\nrequests_per_minut = 60\n"),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, body).expect("write");
        let file = file.to_string_lossy().to_string();
        let checked = run(&["config", "check", &file]);
        let daemon = run(&[
            "daemon",
            "--config",
            &file,
            "--socket",
            &dir.path().join("s.sock").to_string_lossy(),
            "--data-dir",
            &dir.path().join("state").to_string_lossy(),
        ]);
        assert_eq!(
            checked.status.code(),
            Some(64),
            "{name}: {}",
            stderr(&checked)
        );
        assert_eq!(
            daemon.status.code(),
            Some(64),
            "{name}: {}",
            stderr(&daemon)
        );
        assert_eq!(
            stderr(&checked),
            stderr(&daemon),
            "{name}: the same message"
        );
        // Every kind of error names the file, the table and the field.
        let said = stderr(&checked);
        assert!(
            said.contains(&file) && said.contains("[keys.\"k\"]"),
            "{name}: {said}"
        );
        match name {
            "type.toml" => assert!(
                said.contains(
                    "requests_per_minute: expected a number, got the string \"many\" (line 2)"
                ),
                "{said}"
            ),
            "typo.toml" => assert!(
                said.contains("did you mean `requests_per_minute`? (line 2)"),
                "{said}"
            ),
            _ => {}
        }
    }
}
