//! Each tool declares the path it reads, so the authorize stage decides over the resolved path
//! (links followed) before the tool runs.

use super::support::*;
use serde_json::json;
use std::sync::Arc;
use toolgate_core::{
    Access, Decision, ErrorKind, Pipeline, Policy, PolicyInput, Registry, ResolvedResource,
    ToolCall, Verdict, Workspace,
};

/// A pipeline of the read-only tools (and the write tools when `write`) under `policy`, and
/// a session on the fixture's workspace.
fn with_policy(
    f: &Fixture,
    write: bool,
    policy: Arc<dyn Policy>,
) -> (Pipeline, toolgate_core::Session) {
    let mut builder = toolgate_tools::register_read_only(Registry::builder());
    if write {
        builder = toolgate_tools::register_write_tools(builder);
    }
    let pipeline = Pipeline::builder(builder.build().unwrap())
        .policy(policy)
        .build();
    let session = pipeline
        .session("p")
        .workspace(Workspace::open(f.ws()).unwrap())
        .build()
        .unwrap();
    (pipeline, session)
}

/// Denies any call that reads under `secrets/`.
struct DenySecrets;

impl Policy for DenySecrets {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        let protected = input.resources.iter().any(|r| {
            matches!(r, ResolvedResource::Path { path, .. } if path.as_path().starts_with("secrets"))
        });
        if protected {
            Verdict::deny("test.secrets", "secrets/ is protected")
        } else {
            Verdict::allow("test.allow", "everything else is allowed")
        }
    }

    fn decide_path(&self, rel: &std::path::Path, _: Access, _: &str) -> Decision {
        if rel.starts_with("secrets") {
            Decision::Deny
        } else {
            Decision::Allow
        }
    }
}

#[tokio::test]
async fn tools_declare_their_resolved_paths_to_the_policy() {
    let f = Fixture::new();
    f.write("secrets/sub/key.pem", "CANARY-KEY\n");
    f.write("open/a.txt", "a\n");
    f.link("secrets/sub", "innocent");
    let (pipeline, session) = with_policy(&f, false, Arc::new(DenySecrets));
    let calls = [
        ("read_file", json!({"path": "secrets/sub/key.pem"})),
        ("read_file", json!({"path": "innocent/key.pem"})),
        ("read_file", json!({"path": "open/../secrets/sub/key.pem"})),
        ("list_dir", json!({"path": "secrets"})),
        ("list_dir", json!({"path": "innocent"})),
        ("glob", json!({"pattern": "**/*", "path": "secrets"})),
        (
            "search_code",
            json!({"pattern": "CANARY", "path": "innocent"}),
        ),
    ];
    for (i, (tool, args)) in calls.into_iter().enumerate() {
        let r = pipeline
            .dispatch(ToolCall::new(format!("c{i}"), tool, args.clone()), &session)
            .await;
        let e = r
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("{tool} {args}: {}", r.text()));
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (ErrorKind::PermissionDenied, Some("test.secrets")),
            "{tool} {args}"
        );
        assert!(!r.text().contains("CANARY-KEY"));
    }
    let r = pipeline
        .dispatch(
            ToolCall::new("ok", "read_file", json!({"path": "open/a.txt"})),
            &session,
        )
        .await;
    assert!(!r.is_error, "{}", r.text());
}

/// protected-subdir-46, the walking half of the class: a rule on a directory also holds for
/// tools that reach it by walking from a parent.
#[tokio::test]
async fn walks_from_a_parent_do_not_reach_a_denied_directory() {
    let f = Fixture::new();
    f.write("secrets/sub/key.pem", "CANARY-KEY\n");
    f.write("open/a.pem", "CANARY-OPEN\n");
    let (pipeline, session) = with_policy(&f, false, Arc::new(DenySecrets));
    let calls = [
        ("search_code", json!({"pattern": "CANARY"})),
        ("search_code", json!({"pattern": "CANARY", "path": "."})),
        ("glob", json!({"pattern": "**/*.pem"})),
        ("list_dir", json!({})),
    ];
    for (i, (tool, args)) in calls.into_iter().enumerate() {
        let r = pipeline
            .dispatch(ToolCall::new(format!("w{i}"), tool, args.clone()), &session)
            .await;
        assert!(!r.is_error, "{tool} {args}: {}", r.text());
        let text = r.text();
        assert!(!text.contains("CANARY-KEY"), "{tool} {args}: {text}");
        assert!(!text.contains("secrets"), "{tool} {args}: {text}");
        if tool != "list_dir" {
            assert!(text.contains("open/a.pem"), "{tool} {args}: {text}");
        }
    }
}

/// Allows every call, and while it decides swaps `name` (under `root`) for a link to `to`:
/// the race of a process that makes a link while a call runs, between the guard's
/// resolution and the handler's, made certain.
struct SwapsWhileDeciding {
    root: std::path::PathBuf,
    name: &'static str,
    to: &'static str,
}

impl Policy for SwapsWhileDeciding {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        let at = self.root.join(self.name);
        let tmp = self.root.join(format!("{}.swap", self.name));
        if std::os::unix::fs::symlink(self.to, &tmp).is_ok() {
            if at.is_dir() {
                std::fs::rename(&at, self.root.join("moved-away")).unwrap();
            }
            std::fs::rename(&tmp, &at).unwrap();
        }
        let judged: Vec<String> = input
            .resources
            .iter()
            .filter_map(|r| match r {
                ResolvedResource::Path { path, .. } => Some(path.display()),
                _ => None,
            })
            .collect();
        if judged.iter().any(|p| p.starts_with("secrets")) {
            Verdict::deny("test.secrets", "secrets/ is protected")
        } else {
            Verdict::allow("test.allow", "judged before the swap")
        }
    }
}

/// A path swapped for a link to a denied file after the guard resolved it, while the policy
/// decided: read_file returned the denied file's content, write_file and edit_file changed
/// it, list_dir and search_code showed a denied directory (fs toctou class). The handler
/// acts on the path the policy judged or fails with `file_changed`, having done nothing.
#[tokio::test]
async fn a_path_swapped_for_a_link_after_the_policy_judged_it_is_not_followed() {
    for (tool, args, name, to) in [
        (
            "read_file",
            json!({"path": "pub/a.txt"}),
            "pub/a.txt",
            "../secrets/key.txt",
        ),
        (
            "write_file",
            json!({"path": "pub/a.txt", "content": "PWN"}),
            "pub/a.txt",
            "../secrets/key.txt",
        ),
        (
            "edit_file",
            json!({"path": "pub/a.txt", "old_string": "CANARY", "new_string": "PWN"}),
            "pub/a.txt",
            "../secrets/key.txt",
        ),
        ("list_dir", json!({"path": "pub/d"}), "pub/d", "../secrets"),
        (
            "search_code",
            json!({"pattern": "CANARY", "path": "pub/d"}),
            "pub/d",
            "../secrets",
        ),
        (
            "glob",
            json!({"pattern": "*", "path": "pub/d"}),
            "pub/d",
            "../secrets",
        ),
    ] {
        let f = Fixture::new();
        f.write("secrets/key.txt", "CANARY-KEY\n");
        f.write("pub/a.txt", "CANARY public\n");
        f.write("pub/d/x.txt", "public\n");
        let policy = Arc::new(SwapsWhileDeciding {
            root: f.ws(),
            name,
            to,
        });
        let (pipeline, session) = with_policy(&f, true, policy);
        let r = pipeline
            .dispatch(ToolCall::new("c", tool, args.clone()), &session)
            .await;
        let e = r
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("{tool} {args}: {}", r.text()));
        assert_eq!(
            e.reason.as_deref(),
            Some("file_changed"),
            "{tool} {args}: {}",
            r.text()
        );
        assert!(
            !r.text().contains("CANARY-KEY") && !r.text().contains("key.txt"),
            "{tool}: {}",
            r.text()
        );
        assert_eq!(
            std::fs::read_to_string(f.ws().join("secrets/key.txt")).unwrap(),
            "CANARY-KEY\n",
            "{tool}"
        );
    }
}
