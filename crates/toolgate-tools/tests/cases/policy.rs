//! Each tool declares the path it reads, so the authorize stage decides over the resolved path
//! (links followed) before the tool runs.

use super::support::*;
use serde_json::json;
use std::sync::Arc;
use toolgate_core::{
    Access, Decision, ErrorKind, Pipeline, Policy, PolicyInput, Registry, ResolvedResource,
    ToolCall, Verdict, Workspace,
};

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
    let registry = toolgate_tools::register_read_only(Registry::builder())
        .build()
        .unwrap();
    let pipeline = Pipeline::builder(registry)
        .policy(Arc::new(DenySecrets))
        .build();
    let session = pipeline
        .session("p")
        .workspace(Workspace::open(f.ws()).unwrap())
        .build()
        .unwrap();
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
    let registry = toolgate_tools::register_read_only(Registry::builder())
        .build()
        .unwrap();
    let pipeline = Pipeline::builder(registry)
        .policy(Arc::new(DenySecrets))
        .build();
    let session = pipeline
        .session("p")
        .workspace(Workspace::open(f.ws()).unwrap())
        .build()
        .unwrap();
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
