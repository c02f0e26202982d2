//! Parsing config files: every field, and a message naming the field for every bad value.

use super::*;

fn err(text: &str) -> String {
    Config::parse(text, "test.toml")
        .expect_err("should be refused")
        .to_string()
}

#[test]
fn the_example_config_parses() {
    let c = Config::parse(EXAMPLE, "config.example.toml").expect("example parses");
    let (_, gpt) = c
        .keys
        .iter()
        .find(|(k, _)| k == "openai/gpt-5.5")
        .expect("example key");
    assert_eq!(gpt.max_concurrency, Some(64));
    assert_eq!(gpt.output_counted_as, Some(OutputCounting::Reserved));
    let rpm = gpt
        .rates
        .iter()
        .find(|r| r.dimension == Dimension::Requests && r.period == Period::Minute);
    assert_eq!(rpm.map(|r| (r.limit, r.capacity)), Some((5000.0, 10.0)));
    assert_eq!(c.daemon.lease_ttl, Some(Duration::from_secs(600)));
}

#[test]
fn default_bursts() {
    let c = Config::parse(
        "[keys.k]\nrequests_per_minute = 600\ntokens_per_minute = 90000\n",
        "t",
    )
    .expect("parses");
    let r = &c.keys[0].1.rates;
    assert_eq!((r[0].limit, r[0].capacity), (600.0, 10.0));
    assert_eq!((r[1].limit, r[1].capacity), (90000.0, 90000.0));
    let c = Config::parse("[keys.k]\nrequests_per_minute = 30\n", "t").expect("parses");
    assert_eq!(c.keys[0].1.rates[0].capacity, 1.0);
}

#[test]
fn unknown_keys_and_bad_values_name_file_key_and_value() {
    let m = err("[keys.\"a\"]\nrequests_per_minit = 5\n");
    assert!(
        m.contains("test.toml") && m.contains("requests_per_minit") && m.contains("line 2"),
        "{m}"
    );
    let m = err("[keys.a]\nrequests_per_minute = -5\n");
    assert!(m.contains("requests_per_minute = -5"), "{m}");
    let m = err("[keys.a]\ntokens_per_minute = \"lots\"\n");
    assert!(m.contains("tokens_per_minute") || m.contains("lots"), "{m}");
    let m = err("[keys.a]\noutput_counted_as = \"maybe\"\n");
    assert!(m.contains("\"maybe\"") && m.contains("reserved"), "{m}");
    let m = err("[daemon]\nlease_ttl = \"forever\"\n");
    assert!(m.contains("lease_ttl") && m.contains("forever"), "{m}");
    let m = err("[daemon]\nsnapshot_every = \"1s\"\n");
    assert!(m.contains("snapshot_every"), "{m}");
    let m = err("[keys.\"a//b\"]\nrequests_per_minute = 5\n");
    assert!(m.contains("a//b"), "{m}");
    let m = err("[keys.a]\nburst_tokens = 5\n");
    assert!(
        m.contains("burst_tokens = 5") && m.contains("tokens_per_minute"),
        "{m}"
    );
    let m = err("[keys.a]\nmax_concurrency = 0\n");
    assert!(m.contains("max_concurrency = 0"), "{m}");
    let m = err("[keys.\"a\"]\nprovider = \"opneai\"\n");
    assert!(
        m.contains("test.toml")
            && m.contains("[keys.\"a\"] provider = \"opneai\"")
            && m.contains("\"openai\", \"azure\", \"anthropic\", \"gemini\", \"generic\""),
        "{m}"
    );
    let m = err("[keys.a]\nramp_up = \"slowly\"\n");
    assert!(
        m.contains("ramp_up = \"slowly\"") && m.contains("not a duration"),
        "{m}"
    );
    let m = err("[keys.a]\nramp_up = \"2h\"\n");
    assert!(
        m.contains("ramp_up = \"2h\"") && m.contains("at most 1h"),
        "{m}"
    );
}

#[test]
fn provider_presets_and_ramp_up() {
    let c = Config::parse(
        "[keys.\"o\"]\nprovider = \"azure\"\n[keys.\"a\"]\nprovider = \"anthropic\"\nramp_up = \"0s\"\noutput_counted_as = \"reserved\"\n[keys.\"r\"]\nramp_up = \"45s\"\n",
        "t",
    )
    .expect("parses");
    let key = |name: &str| &c.keys.iter().find(|(k, _)| k == name).expect("key").1;
    assert_eq!(key("o").provider, Some(Provider::Azure));
    assert_eq!(key("o").output_counted_as, None);
    assert_eq!(key("a").provider, Some(Provider::Anthropic));
    assert_eq!(key("a").ramp_up, Some(Duration::ZERO));
    assert_eq!(key("a").output_counted_as, Some(OutputCounting::Reserved));
    assert_eq!(key("r").ramp_up, Some(Duration::from_secs(45)));
}

#[test]
fn output_weight_is_a_multiple_of_output_tokens() {
    let c = Config::parse(
        "[keys.\"bedrock/anthropic.claude-sonnet-4-5\"]\noutput_weight = 5\n[keys.\"one\"]\noutput_weight = 1\n",
        "t",
    )
    .expect("parses");
    assert_eq!(c.keys[0].1.output_weight, Some(5.0));
    assert_eq!(c.keys[1].1.output_weight, None, "once is the default");
    for bad in ["0.5", "0", "-2", "1000"] {
        let m = err(&format!("[keys.a]\noutput_weight = {bad}\n"));
        assert!(
            m.contains("output_weight = ") && m.contains("from 1 to 100") && m.contains("Bedrock"),
            "{m}"
        );
    }
}

#[test]
fn warn_at_is_a_share_of_a_plan_window() {
    let c = Config::parse(
        "[keys.\"anthropic\"]\nwarn_at = 0.75\nwindow_budget = 0.8\n",
        "t",
    )
    .expect("parses");
    assert_eq!(c.keys[0].1.warn_at, Some(0.75));
    assert_eq!(c.keys[0].1.window_budget, Some(0.8));
    let m = err("[keys.a]\nwindow_budget = 1.2\n");
    assert!(
        m.contains("window_budget = 1.2") && m.contains("0.8 keeps a fifth"),
        "{m}"
    );
    for bad in ["0", "1.5", "-0.1", "90"] {
        let m = err(&format!("[keys.a]\nwarn_at = {bad}\n"));
        assert!(
            m.contains(&format!(
                "warn_at = {}",
                bad.parse::<f64>().expect("a number")
            )) && m.contains("0.9 warns at 90 % used"),
            "{m}"
        );
    }
}

#[test]
fn profiles_route_groups_and_run_budgets() {
    let text = r#"
[daemon]
default_profile = "nightly"
breaker_failure_rate = 0.25
[profiles.interactive]
attempts = 2
[profiles.nightly]
attempts = 12
deadline = "30m"
backoff = "decorrelated"
[keys."a"]
profile = "interactive"
breaker_min_requests = 5
[route_groups.chat]
members = [{ key = "a" }, { key = "b", when = ["rate_limited"] }, { key = "c", when = ["context_length"] }]
[run_budget]
max_calls = 10
max_wall_time = "5m"
"#;
    let c = Config::parse(text, "t").expect("parses");
    let e = c.engine_config();
    let interactive = e
        .profiles
        .iter()
        .find(|p| p.name == "interactive")
        .expect("interactive");
    assert_eq!(
        (interactive.attempts, interactive.deadline),
        (2, Duration::from_secs(8))
    );
    let nightly = e
        .profiles
        .iter()
        .find(|p| p.name == "nightly")
        .expect("nightly");
    assert_eq!(
        (nightly.attempts, nightly.backoff),
        (12, Backoff::Decorrelated)
    );
    assert_eq!(e.default_profile, "nightly");
    assert_eq!(e.breaker.failure_rate, 0.25);
    let a = &c.keys[0].1;
    assert_eq!(a.profile.as_deref(), Some("interactive"));
    let b = a.breaker.as_ref().expect("own breaker");
    assert_eq!((b.min_requests, b.failure_rate), (5, 0.25));
    assert_eq!(
        e.route_groups[0].members[1].when,
        vec![Condition::RateLimited]
    );
    assert_eq!(e.run_budget.max_calls, Some(10));
    assert_eq!(e.run_budget.max_wall_time, Some(Duration::from_secs(300)));
}

#[test]
fn policy_mistakes_are_named() {
    let m = err("[profiles.p]\nbackoff = \"linear\"\n");
    assert!(
        m.contains("backoff = \"linear\"") && m.contains("decorrelated"),
        "{m}"
    );
    let m = err("[keys.a]\nprofile = \"urgent\"\n");
    assert!(m.contains("urgent") && m.contains("[keys.\"a\"]"), "{m}");
    let m = err("[route_groups.g]\nmembers = [{ key = \"a\", when = [\"sometimes\"] }]\n");
    assert!(m.contains("sometimes") && m.contains("rate_limited"), "{m}");
    let m = err("[route_groups.g]\nmembers = [{ key = \"a\", when = [\"rate_limited\"] }]\n");
    assert!(m.contains("no member without"), "{m}");
    let m = err("[daemon]\nbreaker_failure_rate = 1.5\n");
    assert!(m.contains("breaker_failure_rate = 1.5"), "{m}");
    let m = err("[daemon]\nbreaker_window = \"5m\"\n");
    assert!(m.contains("breaker_window"), "{m}");
    let m = err("[run_budget]\nmax_calls = 0\n");
    assert!(m.contains("max_calls = 0"), "{m}");
    let m = err("[daemon]\nmax_attempts = 3\n");
    assert!(m.contains("max_attempts"), "{m}");
}

#[test]
fn fleet_settings_are_read_and_bad_ones_named() {
    let c = Config::parse(
        "[fleet]\nredis = \"unix:///run/redis.sock\"\nhost = \"web-2\"\nslice = \"500ms\"\n\
         [keys.\"mine\"]\nrequests_per_minute = 60\nfleet = false\n",
        "t.toml",
    )
    .expect("parses");
    let f = c.fleet.expect("fleet");
    assert_eq!(f.redis, "unix:///run/redis.sock");
    assert_eq!(f.host.as_deref(), Some("web-2"));
    assert_eq!(f.slice, Duration::from_millis(500));
    assert!(c.keys[0].1.local_only);
    let f = Config::parse("[fleet]\nredis = \"redis://h:6379/0\"\n", "t.toml")
        .expect("parses")
        .fleet
        .expect("fleet");
    assert_eq!((f.host, f.slice), (None, fleet::DEFAULT_SLICE));
    assert!(f.lines, "crowded keys go on their lines unless told not to");
    let f = Config::parse("[fleet]\nredis = \"redis://h\"\nlines = false\n", "t.toml")
        .expect("parses")
        .fleet
        .expect("fleet");
    assert!(!f.lines);
    for (text, names) in [
        (
            "[fleet]\nredis = \"http://h:6379\"\n",
            "redis = \"http://h:6379\"",
        ),
        ("[fleet]\nhost = \"a\"\n", "redis = (missing)"),
        (
            "[fleet]\nredis = \"redis://h\"\nslice = \"10ms\"\n",
            "slice = \"10ms\"",
        ),
        (
            "[fleet]\nredis = \"redis://h\"\nhost = \"\"\n",
            "host = \"\"",
        ),
        ("[fleet]\nredis = \"redis://h\"\nhosts = 3\n", "hosts"),
    ] {
        let e = Config::parse(text, "t.toml").expect_err(text).to_string();
        assert!(
            e.contains(names) && e.starts_with("config file t.toml"),
            "{e}"
        );
    }
    // redis_ca: for a TLS URL only, a readable file, with a certificate in it.
    let not_pem = std::env::temp_dir().join(format!("llmctl-not-a-ca-{}.pem", std::process::id()));
    std::fs::write(&not_pem, "not a certificate\n").expect("write");
    let np = not_pem.display();
    for (text, names) in [
        (
            format!("[fleet]\nredis = \"redis://h\"\nredis_ca = \"{np}\"\n"),
            format!("redis_ca = \"{np}\": is for a Redis reached over TLS, and redis://h is not"),
        ),
        (
            "[fleet]\nredis = \"rediss://h\"\nredis_ca = \"/nonexistent/ca.pem\"\n".into(),
            "redis_ca = \"/nonexistent/ca.pem\": cannot be read".into(),
        ),
        (
            format!("[fleet]\nredis = \"rediss://h\"\nredis_ca = \"{np}\"\n"),
            format!("redis_ca = \"{np}\": holds no PEM certificate"),
        ),
    ] {
        let e = Config::parse(&text, "t.toml").expect_err(&text).to_string();
        assert!(e.contains(&names), "{e}");
    }
    let _ = std::fs::remove_file(&not_pem);
    assert_eq!(
        fleet::redacted("redis://u:secret@h:6379/0"),
        "redis://u:***@h:6379/0"
    );
    assert_eq!(fleet::redacted("unix:///run/r.sock"), "unix:///run/r.sock");
}
