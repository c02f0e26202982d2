//! Records the git revision the binary was built from, for `llmctl --version`.

use std::process::Command;

fn main() {
    // Only this repository's own revision: not that of a checkout the sources sit inside.
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let ours = git(&["rev-parse", "--show-toplevel"])
        .and_then(|top| std::fs::canonicalize(top).ok())
        .zip(std::fs::canonicalize(&root).ok())
        .is_some_and(|(top, root)| top == root);
    let rev = ours
        .then(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .flatten()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "unknown revision".to_string());
    let dirty = ours
        && git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let rev = if dirty {
        format!("{rev}, modified")
    } else {
        rev
    };
    println!("cargo:rustc-env=LLMCTL_GIT_REV={rev}");
    // Rebuilt when the checked-out revision changes (in a worktree too, where .git is a file).
    for path in ["HEAD", "index"] {
        if let Some(p) = ours
            .then(|| git(&["rev-parse", "--git-path", path]))
            .flatten()
        {
            println!(
                "cargo:rerun-if-changed={}",
                std::path::Path::new(&root).join(p).display()
            );
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
