//! Agent CLIs that read no base-URL variable, and how `llmctl exec` points each at the proxy.
//!
//! Codex reads its base URL from its own config (`openai_base_url` in
//! `$CODEX_HOME/config.toml`, default `~/.codex`) or a `-c openai_base_url=…` override, not from
//! `OPENAI_BASE_URL`. `exec` gives it a `-c` override naming the proxy (right after the program,
//! or in place of the user's own override), with the route going where Codex would have gone:
//! the user's `openai_base_url` when one is set, the ChatGPT backend when Codex is logged in with
//! ChatGPT, else the OpenAI API. The user's config and credentials are left as they are.

use std::path::{Path, PathBuf};

/// Where Codex sends requests when it is logged in with ChatGPT (no API key).
pub const CHATGPT_BACKEND: &str = "https://chatgpt.com/backend-api/codex";

/// A Codex command line and where its requests would go without llmctl.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Codex {
    /// Index of the word that runs Codex (`codex`, or the package after `npx`).
    pub program: usize,
    /// The user's own `-c openai_base_url=…`: the indices of its words (one or two).
    pub override_at: Option<(usize, usize)>,
    /// Where its requests would go: `None` for the built-in OpenAI API.
    pub destination: Option<String>,
    /// What chose the destination, for `--verbose`.
    pub because: &'static str,
}

const LAUNCHERS: [&str; 6] = ["npx", "bunx", "pnpx", "yarn", "pnpm", "bun"];

/// A launcher's words that name what it does, not the package.
const VERBS: [&str; 4] = ["dlx", "exec", "run", "x"];

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_codex(word: &str) -> bool {
    let package = word.split('@').find(|s| !s.is_empty()).unwrap_or("");
    base(word) == "codex"
        || word == "@openai/codex"
        || word.starts_with("@openai/codex@")
        || (package == "codex" && !word.starts_with('@'))
}

/// The word of `command` that runs Codex, if it is a Codex command: `codex …`, or a launcher
/// running its package (`npx @openai/codex …`, `npx codex …`, `pnpm dlx @openai/codex`,
/// `yarn run codex`), or running a command of a package it was given (`npx -p @openai/codex
/// codex …`: the command's word, after which Codex's own options go).
pub fn codex_word(command: &[String]) -> Option<usize> {
    let first = command.first()?;
    if is_codex(first) && !LAUNCHERS.contains(&base(first)) {
        return Some(0);
    }
    if !LAUNCHERS.contains(&base(first)) {
        return None;
    }
    let mut package = None;
    let mut i = 1;
    while i < command.len() {
        let w = command[i].as_str();
        if w == "-p" || w == "--package" {
            package = command.get(i + 1).cloned();
            i += 2;
            continue;
        }
        if let Some(p) = w.strip_prefix("--package=") {
            package = Some(p.to_string());
        } else if !w.starts_with('-') && !VERBS.contains(&w) {
            // The first word that is neither an option nor a verb: the package, or with -p the
            // command of the package named.
            let codex = match &package {
                Some(p) => is_codex(p) && base(w) == "codex",
                None => is_codex(w),
            };
            return codex.then_some(i);
        }
        i += 1;
    }
    None
}

/// The value of a `-c`/`--config` override of `key` among `args` (words after the program):
/// the indices of its words, relative to `args`, and the value as Codex reads it.
fn config_override(args: &[String], key: &str) -> Option<((usize, usize), String)> {
    let mut found = None;
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if w == "--" {
            break;
        }
        let (pair, span) = if w == "-c" || w == "--config" {
            (args.get(i + 1).cloned(), (i, i + 1))
        } else if let Some(v) = w.strip_prefix("--config=") {
            (Some(v.to_string()), (i, i))
        } else if let Some(v) = w.strip_prefix("-c=") {
            (Some(v.to_string()), (i, i))
        } else if let Some(v) = w.strip_prefix("-c").filter(|v| !v.is_empty()) {
            (Some(v.to_string()), (i, i))
        } else {
            (None, (i, i))
        };
        if let Some((k, v)) = pair.as_deref().and_then(|p| p.split_once('=')) {
            if k.trim() == key {
                // The last one wins, as it does for Codex.
                found = Some((span, toml_string(v.trim())));
            }
        }
        i = span.1 + 1;
    }
    found
}

/// A `-c` value as Codex reads it: TOML when it parses as TOML, else the text itself.
fn toml_string(v: &str) -> String {
    format!("v = {v}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("v").and_then(|v| v.as_str().map(str::to_string)))
        .unwrap_or_else(|| v.to_string())
}

/// Codex's home: `CODEX_HOME`, else `~/.codex`.
pub fn codex_home(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".codex")))
}

/// Whether Codex at `home` is logged in with ChatGPT (its auth.json holds tokens and no API
/// key) and no `CODEX_API_KEY` overrides it.
fn chatgpt_login(home: Option<&Path>, env: &dyn Fn(&str) -> Option<String>) -> bool {
    if env("CODEX_API_KEY").is_some_and(|k| !k.is_empty()) {
        return false;
    }
    let Some(text) = home.and_then(|h| std::fs::read_to_string(h.join("auth.json")).ok()) else {
        return false;
    };
    let Ok(auth) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    let key = auth
        .get("OPENAI_API_KEY")
        .and_then(|k| k.as_str())
        .is_some_and(|k| !k.is_empty());
    let mode = auth.get("auth_mode").and_then(|m| m.as_str());
    match mode {
        Some(m) => m.eq_ignore_ascii_case("chatgpt"),
        None => !key && auth.get("tokens").is_some_and(|t| t.is_object()),
    }
}

/// How `command` runs Codex and where its requests would go, if it does. Reads Codex's config
/// and login at its home (with `env`); an unreadable config is taken as none.
pub fn codex(command: &[String], env: &dyn Fn(&str) -> Option<String>) -> Option<Codex> {
    let program = codex_word(command)?;
    let args = &command[program + 1..];
    let home = codex_home(env);
    if let Some(((a, b), url)) = config_override(args, "openai_base_url") {
        return Some(Codex {
            program,
            override_at: Some((program + 1 + a, program + 1 + b)),
            destination: Some(url),
            because: "its -c openai_base_url",
        });
    }
    let configured = home
        .as_deref()
        .and_then(|h| std::fs::read_to_string(h.join("config.toml")).ok())
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| {
            t.get("openai_base_url")
                .and_then(|v| v.as_str())
                .map(str::to_string)
        })
        .filter(|u| !u.trim().is_empty());
    let (destination, because) = match configured {
        Some(u) => (Some(u), "openai_base_url in its config.toml"),
        None if chatgpt_login(home.as_deref(), env) => (
            Some(CHATGPT_BACKEND.to_string()),
            "its ChatGPT login (auth.json)",
        ),
        None => (None, "its API key: the OpenAI API"),
    };
    Some(Codex {
        program,
        override_at: None,
        destination,
        because,
    })
}

impl Codex {
    /// `command` with Codex pointed at `base` (the proxy's URL for its route).
    pub fn rewrite(&self, command: &[String], base: &str) -> Vec<String> {
        let set = format!("openai_base_url=\"{base}\"");
        let mut out = command.to_vec();
        match self.override_at {
            Some((a, b)) => {
                out.splice(a..=b, ["-c".to_string(), set]);
            }
            None => {
                out.splice(self.program + 1..self.program + 1, ["-c".to_string(), set]);
            }
        }
        out
    }
}

/// The command a shim runs: the real Codex at `real` with `args`, pointed at `base` (the
/// proxy's route to where Codex would have gone), unless its own `-c openai_base_url` already
/// leads under the proxy at `proxy` (left as it is). An override to elsewhere is left too (the
/// proxy, running already, has no route to it): the note says so.
pub fn shimmed(
    args: &[String],
    real: &Path,
    proxy: &str,
    base: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Vec<String>, Option<String>) {
    let mut command = vec![real.display().to_string()];
    command.extend_from_slice(args);
    let Some(c) = codex(&command, env) else {
        return (command, None);
    };
    match (&c.override_at, c.destination.as_deref()) {
        (Some(_), Some(d)) if super::env::is_under(d, proxy) => (command, None),
        (Some(_), Some(d)) => {
            let note = format!(
                "llmctl exec: codex's own openai_base_url {d} has no route through the proxy: its requests are not limited (give it under $LLMCTL_PROXY_URL, or run codex directly under exec)"
            );
            (command, Some(note))
        }
        _ => (c.rewrite(&command, base), None),
    }
}

/// The first executable `name` on `path` (a PATH value) that is not a shim of an `exec`'s
/// (this one's, or one it runs under: each would find the other's, forever).
pub fn find_program(name: &str, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                && !is_shim(p)
        })
}

/// What every shim says on its second line.
const SHIM_MARK: &str = "# Written by llmctl exec:";

fn is_shim(p: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 128];
    let n = std::fs::File::open(p)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    String::from_utf8_lossy(&head[..n]).contains(SHIM_MARK)
}

/// The shim `exec` puts first on a command's PATH as `codex`: it runs `llmctl codex-shim`,
/// which runs the real Codex pointed at the proxy.
pub fn shim_script(llmctl: &Path) -> String {
    let quoted = llmctl.display().to_string().replace('\'', "'\\''");
    format!("#!/bin/sh\n{SHIM_MARK} Codex, limited through the proxy.\nexec '{quoted}' codex-shim -- \"$@\"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn home_with(files: &[(&str, &str)]) -> tempfile_dir::Dir {
        let d = tempfile_dir::Dir::new();
        for (name, text) in files {
            std::fs::write(d.path().join(name), text).expect("write");
        }
        d
    }

    /// A directory removed when dropped (no crate for one line's worth).
    mod tempfile_dir {
        pub struct Dir(std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                use std::sync::atomic::{AtomicU32, Ordering};
                static N: AtomicU32 = AtomicU32::new(0);
                let p = std::env::temp_dir().join(format!(
                    "llmctl-codex-home-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&p).expect("mkdir");
                Dir(p)
            }
            pub fn path(&self) -> &std::path::Path {
                &self.0
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    fn env_of(vars: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
        move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn codex_commands_are_recognised_however_they_are_launched() {
        assert_eq!(codex_word(&words("codex exec hi")), Some(0));
        assert_eq!(codex_word(&words("/usr/local/bin/codex")), Some(0));
        assert_eq!(
            codex_word(&words("npx -y @openai/codex@0.169.0 exec hi")),
            Some(2)
        );
        assert_eq!(codex_word(&words("npx codex")), Some(1));
        assert_eq!(codex_word(&words("pnpm dlx @openai/codex")), Some(2));
        assert_eq!(codex_word(&words("pnpm exec codex exec hi")), Some(2));
        assert_eq!(codex_word(&words("bun x @openai/codex")), Some(2));
        // The package named by -p; the command after it is Codex's own word, where its
        // options go (npx's own -c would run a shell command).
        assert_eq!(
            codex_word(&words("npx -p @openai/codex codex exec hi")),
            Some(3)
        );
        assert_eq!(
            codex_word(&words("npx --package=@openai/codex@0.169.0 -y codex")),
            Some(3)
        );
        assert_eq!(codex_word(&words("npx -p cowsay cowsay codex")), None);
        assert_eq!(codex_word(&words("yarn run codex exec hi")), Some(2));
        assert_eq!(codex_word(&words("yarn codex")), Some(1));
        assert_eq!(codex_word(&words("claude -p hi")), None);
        assert_eq!(codex_word(&words("npx cowsay codex")), None);
        assert_eq!(codex_word(&words("codexer")), None);
    }

    #[test]
    fn an_api_key_codex_goes_to_the_openai_api_through_a_c_override_after_the_program() {
        let home = home_with(&[]);
        let env = env_of(vec![("CODEX_HOME", home.path().display().to_string())]);
        let cmd = words("codex exec --skip-git-repo-check hi");
        let c = codex(&cmd, &env).expect("codex");
        assert_eq!(c.destination, None);
        assert_eq!(
            c.rewrite(&cmd, "http://127.0.0.1:9/openai/v1"),
            words("codex -c openai_base_url=\"http://127.0.0.1:9/openai/v1\" exec --skip-git-repo-check hi")
        );
    }

    #[test]
    fn the_users_own_base_url_is_kept_as_the_destination_from_config_or_override() {
        let home = home_with(&[(
            "config.toml",
            "model = \"gpt-5.5\"\nopenai_base_url = \"http://10.0.0.7:8000/v1\"\n",
        )]);
        let env = env_of(vec![("CODEX_HOME", home.path().display().to_string())]);
        let c = codex(&words("codex"), &env).expect("codex");
        assert_eq!(c.destination.as_deref(), Some("http://10.0.0.7:8000/v1"));
        // An override on the command line wins over the config, and is replaced in place (a
        // later -c would win over ours).
        let cmd: Vec<String> = [
            "codex",
            "exec",
            "-c",
            "openai_base_url=\"https://gw.example/v1\"",
            "hi",
        ]
        .map(String::from)
        .to_vec();
        let c = codex(&cmd, &env).expect("codex");
        assert_eq!(c.destination.as_deref(), Some("https://gw.example/v1"));
        assert_eq!(
            c.rewrite(&cmd, "http://127.0.0.1:9/exec-openai"),
            [
                "codex",
                "exec",
                "-c",
                "openai_base_url=\"http://127.0.0.1:9/exec-openai\"",
                "hi"
            ]
            .map(String::from)
            .to_vec()
        );
        let cmd: Vec<String> = ["codex", "--config=openai_base_url=https://gw.example/v1"]
            .map(String::from)
            .to_vec();
        let c = codex(&cmd, &env).expect("codex");
        assert_eq!(
            c.destination.as_deref(),
            Some("https://gw.example/v1"),
            "an unquoted value is text"
        );
        assert_eq!(c.rewrite(&cmd, "http://p").len(), 3);
        // `-c=key=value` and `-ckey=value` are the same override.
        for form in [
            "-c=openai_base_url=https://gw.example/v1",
            "-copenai_base_url=https://gw.example/v1",
        ] {
            let cmd: Vec<String> = ["codex", form, "exec"].map(String::from).to_vec();
            let c = codex(&cmd, &env).expect("codex");
            assert_eq!(
                c.destination.as_deref(),
                Some("https://gw.example/v1"),
                "{form}"
            );
            assert_eq!(
                c.rewrite(&cmd, "http://p"),
                ["codex", "-c", "openai_base_url=\"http://p\"", "exec"]
                    .map(String::from)
                    .to_vec(),
                "{form}"
            );
        }
    }

    /// A `codex` started by a script, a shell or a Makefile under `exec` finds the shim first
    /// on its PATH: the real Codex runs with the proxy's route added, unless its own override
    /// already leads to a proxy (exec's own rewrite of a direct `codex`).
    #[test]
    fn a_shimmed_codex_gets_the_route_unless_its_override_leads_to_the_proxy() {
        let home = home_with(&[]);
        let env = env_of(vec![("CODEX_HOME", home.path().display().to_string())]);
        let real = std::path::Path::new("/opt/codex/bin/codex");
        let proxy = "http://127.0.0.1:9";
        let base = "http://127.0.0.1:9/openai/v1";
        let (argv, note) = shimmed(&words("exec hi"), real, proxy, base, &env);
        assert_eq!(
            argv,
            words(
                "/opt/codex/bin/codex -c openai_base_url=\"http://127.0.0.1:9/openai/v1\" exec hi"
            )
        );
        assert_eq!(note, None);
        let own: Vec<String> = [
            "-c",
            "openai_base_url=\"http://127.0.0.1:9/openai/v1\"",
            "exec",
        ]
        .map(String::from)
        .to_vec();
        let (argv, note) = shimmed(&own, real, proxy, base, &env);
        assert_eq!(argv[1..], own[..], "left as it is");
        assert_eq!(note, None);
        let elsewhere = words("-c openai_base_url=https://gw.example/v1 exec");
        let (argv, note) = shimmed(&elsewhere, real, proxy, base, &env);
        assert_eq!(
            argv[1..],
            elsewhere[..],
            "a destination the proxy has no route to"
        );
        assert!(note.is_some_and(|n| n.contains("https://gw.example/v1")));
    }

    /// Past every exec's shim: an `exec` inside an `exec` puts its own first, and each would
    /// otherwise run the other's, forever.
    #[test]
    fn the_real_codex_is_the_first_on_path_past_every_shim() {
        let script = shim_script(Path::new("/usr/bin/llmctl"));
        let inner = home_with(&[("codex", script.as_str())]);
        let outer = home_with(&[("codex", script.as_str())]);
        let bin = home_with(&[("codex", "#!/bin/sh\n")]);
        use std::os::unix::fs::PermissionsExt;
        for d in [inner.path(), outer.path(), bin.path()] {
            std::fs::set_permissions(d.join("codex"), std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
        let path = format!(
            "{}:{}:/nonexistent:{}",
            inner.path().display(),
            outer.path().display(),
            bin.path().display()
        );
        assert_eq!(find_program("codex", &path), Some(bin.path().join("codex")));
        assert_eq!(find_program("codex", "/nonexistent"), None);
    }

    #[test]
    fn a_chatgpt_login_goes_to_the_chatgpt_backend_unless_an_api_key_is_given() {
        let home = home_with(&[(
            "auth.json",
            r#"{"OPENAI_API_KEY": null, "tokens": {"access_token": "x", "account_id": "a"}}"#,
        )]);
        let h = home.path().display().to_string();
        let c = codex(&words("codex"), &env_of(vec![("CODEX_HOME", h.clone())])).expect("codex");
        assert_eq!(c.destination.as_deref(), Some(CHATGPT_BACKEND));
        let c = codex(
            &words("codex"),
            &env_of(vec![("CODEX_HOME", h), ("CODEX_API_KEY", "sk-x".into())]),
        )
        .expect("codex");
        assert_eq!(c.destination, None);
        let keyed = home_with(&[("auth.json", r#"{"OPENAI_API_KEY": "sk-y"}"#)]);
        let env = env_of(vec![("CODEX_HOME", keyed.path().display().to_string())]);
        assert_eq!(
            codex(&words("codex"), &env).expect("codex").destination,
            None
        );
    }
}
