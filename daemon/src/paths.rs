//! Where the daemon lives on a host (docs/ARCHITECTURE.md, "Where it runs"). Environment lookups go
//! through a function so tests never touch the process environment.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// The user id this process runs as (the owner of `/proc/self`).
pub fn current_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0)
}

fn non_empty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.is_empty())
}

/// `$LLMCTL_SOCKET`, else `$XDG_RUNTIME_DIR/llmctl/llmctl.sock`, else `/tmp/llmctl-$UID/llmctl.sock`.
pub fn socket_path(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    if let Some(p) = non_empty(env("LLMCTL_SOCKET")) {
        return PathBuf::from(p);
    }
    if let Some(dir) = non_empty(env("XDG_RUNTIME_DIR")) {
        return PathBuf::from(dir).join("llmctl").join("llmctl.sock");
    }
    PathBuf::from(format!("/tmp/llmctl-{}", current_uid())).join("llmctl.sock")
}

/// `$XDG_STATE_HOME/llmctl`, else `~/.local/state/llmctl`.
pub fn data_dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    if let Some(dir) = non_empty(env("XDG_STATE_HOME")) {
        return PathBuf::from(dir).join("llmctl");
    }
    let home = non_empty(env("HOME")).unwrap_or_else(|| format!("/tmp/llmctl-{}", current_uid()));
    PathBuf::from(home).join(".local/state/llmctl")
}

/// `$XDG_CONFIG_HOME/llmctl/config.toml`, else `~/.config/llmctl/config.toml`.
pub fn config_file(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(dir) = non_empty(env("XDG_CONFIG_HOME")) {
        return Some(PathBuf::from(dir).join("llmctl/config.toml"));
    }
    non_empty(env("HOME")).map(|h| PathBuf::from(h).join(".config/llmctl/config.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn socket_path_order() {
        let e = env(&[
            ("LLMCTL_SOCKET", "/s/x.sock"),
            ("XDG_RUNTIME_DIR", "/run/user/7"),
        ]);
        assert_eq!(socket_path(&e), PathBuf::from("/s/x.sock"));
        let e = env(&[("XDG_RUNTIME_DIR", "/run/user/7")]);
        assert_eq!(
            socket_path(&e),
            PathBuf::from("/run/user/7/llmctl/llmctl.sock")
        );
        let e = env(&[]);
        assert_eq!(
            socket_path(&e),
            PathBuf::from(format!("/tmp/llmctl-{}/llmctl.sock", current_uid()))
        );
    }

    #[test]
    fn state_and_config_follow_xdg() {
        let e = env(&[
            ("XDG_STATE_HOME", "/st"),
            ("XDG_CONFIG_HOME", "/cf"),
            ("HOME", "/h"),
        ]);
        assert_eq!(data_dir(&e), PathBuf::from("/st/llmctl"));
        assert_eq!(
            config_file(&e),
            Some(PathBuf::from("/cf/llmctl/config.toml"))
        );
        let e = env(&[("HOME", "/h")]);
        assert_eq!(data_dir(&e), PathBuf::from("/h/.local/state/llmctl"));
        assert_eq!(
            config_file(&e),
            Some(PathBuf::from("/h/.config/llmctl/config.toml"))
        );
    }
}
