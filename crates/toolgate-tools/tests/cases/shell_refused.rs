//! run_shell's note on a write the sandbox refused: when a command's output shows a write
//! refused (EBUSY, EROFS, EACCES, EPERM) on an entry the run had bound read-only, the result
//! says which entry, why toolgate keeps it read-only and what to do instead
//! (`protected_refused`); any other failed write is left to the output.

use super::shell_support::*;
use pretty_assertions::assert_eq;
use toolgate_tools::shell::run_shell::RunShellOutput;

/// `(path, error)` of each note of `o`.
fn refused(o: &RunShellOutput) -> Vec<(String, String)> {
    o.protected_refused
        .iter()
        .map(|r| (r.path.clone(), r.error.clone()))
        .collect()
}

/// A repository in the workspace and one beside it (`outside/lib`) to add as a submodule
/// over a file:// URL, so nothing goes to the network.
fn repositories() -> Shell {
    let s = Shell::new();
    s.setup(
        "git init -q && git -c user.name=t -c user.email=t@example.com commit -q \
         --allow-empty -m init && mkdir .vscode && echo '{}' > .vscode/settings.json && \
         git init -q sub && git init -q ../outside/lib && cd ../outside/lib && \
         git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m lib",
    );
    s
}

#[tokio::test]
async fn git_commands_that_write_the_config_are_told_why_they_failed() {
    let s = repositories();
    let o = s.run("git config user.name x").await;
    assert_ne!(o.exit_code, Some(0), "{o:?}");
    assert!(o.stderr.contains(".git/config"), "{o:?}");
    assert_eq!(
        refused(&o),
        [(".git/config".to_string(), "EBUSY".to_string())],
        "{o:?}"
    );
    let note = &o.protected_refused[0];
    assert_eq!(note.protected, "git internals (.git)");
    for said in [
        "`.git/config`",
        "read-only during every run",
        "ask the user",
        "git -c user.name=",
    ] {
        assert!(
            note.note.contains(said),
            "{said:?} missing from {:?}",
            note.note
        );
    }
    // the configuration is unchanged
    let config = std::fs::read_to_string(s.ws().join(".git/config")).unwrap();
    assert!(!config.contains("name = x"), "{config}");

    let url = format!("file://{}", s.t.join("outside/lib").display());
    let o = s
        .run(&format!(
            "git -c protocol.file.allow=always submodule add {url} lib"
        ))
        .await;
    // git clones the submodule and writes .gitmodules, then fails to register it in the
    // configuration, and exits 0 all the same: the note is all that says so
    assert!(s.ws().join(".gitmodules").exists(), "{o:?}");
    assert_eq!(
        refused(&o),
        [(".git/config".to_string(), "EBUSY".to_string())],
        "{o:?}"
    );
    assert!(
        o.protected_refused[0].note.contains("submodule"),
        "{:?}",
        o.protected_refused[0].note
    );

    // in a nested repository, run from its directory: git names the path from there
    let o = output(
        &s.call(serde_json::json!({"command": "git config user.name x", "cwd": "sub"}))
            .await,
    );
    assert_eq!(
        refused(&o),
        [("sub/.git/config".to_string(), "EBUSY".to_string())],
        "{o:?}"
    );
}

#[tokio::test]
async fn writes_into_protected_directories_are_told_why_they_failed() {
    let s = repositories();
    let root = s.ws();
    let o = s
        .run(&format!(
            "echo '{{}}' > .vscode/settings.json; echo x > {}/.vscode/tasks.json; \
             mkdir -p app && cd app && echo x | tee ../.git/hooks/pre-commit",
            root.display()
        ))
        .await;
    assert_eq!(
        refused(&o),
        [
            (".vscode".to_string(), "EROFS".to_string()),
            (".git/hooks".to_string(), "EROFS".to_string()),
        ],
        "{o:?}"
    );
    assert!(
        o.protected_refused[0].note.contains("write_file"),
        "{:?}",
        o.protected_refused[0].note
    );
}

#[tokio::test]
async fn other_failed_writes_and_mere_mentions_get_no_note() {
    let s = repositories();
    for command in [
        "echo .git/config; cat .git/config > /dev/null",
        "echo 'could not lock config file .git/config' ; true",
        "touch /etc/toolgate-test 2>&1; echo x | tee /proc/version",
        "chmod 000 f 2>/dev/null; touch f; chmod 000 f; cat f",
        "echo 'Permission denied: config'",
    ] {
        let o = s.run(command).await;
        assert_eq!(refused(&o), [], "{command}: {o:?}");
    }
    // a refused write shown on standard output counts as on standard error
    let o = s.run("git config user.email y 2>&1").await;
    assert_eq!(
        refused(&o),
        [(".git/config".to_string(), "EBUSY".to_string())],
        "{o:?}"
    );
}
