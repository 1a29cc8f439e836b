//! The policy cases of `shared/cases/security.jsonl` (protected paths, deny through symlinks,
//! aliases and case variants, toolgate's own configuration), each as a test of its class,
//! through the real pipeline and the real built-in tools on a temp workspace, with the policy
//! built from a `toolgate.toml`.

use super::support::Setup;
use serde_json::json;
use std::sync::Arc;
use toolgate_core::{ErrorKind, ToolCall, ToolResult};
use toolgate_test_support::TempWorkspace;

fn error(r: &ToolResult) -> (ErrorKind, Option<String>) {
    let e = r
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("expected an error, got {}", r.text()));
    (e.kind, e.reason.as_deref().map(str::to_string))
}

fn denied_by(r: &ToolResult, rule: &str) {
    assert_eq!(
        error(r),
        (ErrorKind::PermissionDenied, Some(rule.to_string())),
        "{}",
        r.text()
    );
}

/// protected-subdir-46 (protected_path): a deny on the directory `secrets` covers everything
/// below it, whichever path reaches it: directly, through a symlink, through `..`, in another
/// case; and walking tools leave it out.
#[tokio::test]
async fn protected_subdir_46_a_directory_rule_covers_every_path_to_it() {
    let ws = TempWorkspace::new();
    ws.sh(
        "mkdir -p ws/secrets/sub ws/open; echo CANARY-KEY > ws/secrets/sub/key.pem; \
           echo ok > ws/open/a.txt; ln -s secrets/sub ws/innocent; ln -s ../secrets ws/open/up",
    );
    let s = Setup::new(
        ws,
        r#"
[[rules]]
name = "no-secrets"
decision = "deny"
resource = "path:secrets"
access = "read"
"#,
        None,
        &[],
    );
    for path in [
        "secrets/sub/key.pem",
        "innocent/key.pem",
        "open/../secrets/sub/key.pem",
        "open/up/sub/key.pem",
        "./secrets//sub/key.pem",
        "SECRETS/sub/key.pem",
        "Secrets/Sub/Key.pem",
    ] {
        let r = s.call("read_file", json!({ "path": path })).await;
        denied_by(&r, "no-secrets");
        assert!(!r.text().contains("CANARY-KEY"), "{path}");
    }
    for (tool, args) in [
        ("list_dir", json!({"path": "innocent"})),
        ("glob", json!({"pattern": "**/*", "path": "open/up"})),
        (
            "search_code",
            json!({"pattern": "CANARY", "path": "secrets"}),
        ),
    ] {
        denied_by(&s.call(tool, args).await, "no-secrets");
    }
    // walking from the root does not reach it
    for (tool, args) in [
        ("search_code", json!({"pattern": "CANARY"})),
        ("glob", json!({"pattern": "**/*.pem"})),
    ] {
        let r = s.call(tool, args.clone()).await;
        assert!(!r.is_error, "{tool} {args}: {}", r.text());
        assert!(!r.text().contains("CANARY-KEY"), "{tool}: {}", r.text());
        assert!(!r.text().contains("key.pem"), "{tool}: {}", r.text());
    }
    let r = s.call("read_file", json!({"path": "open/a.txt"})).await;
    assert!(!r.is_error, "{}", r.text());
}

/// The `.env` and `.git/config` class: a deny holds through symlinks, relative paths and
/// case variants, for reading and writing tools alike, and names its rule.
#[tokio::test]
async fn deny_on_env_and_git_config_holds_through_links_and_case_variants() {
    let ws = TempWorkspace::new();
    ws.sh(
        "mkdir -p ws/app ws/.git; echo SECRET=CANARY-ENV > ws/.env; \
           echo SECRET=CANARY-APP > ws/app/.env; printf '[core]\\n' > ws/.git/config; \
           ln -s .env ws/settings.txt; ln -s ../.git/config ws/app/gitcfg",
    );
    let s = Setup::new(
        ws,
        r#"
[[rules]]
decision = "deny"
resource = "path:.env"

[[rules]]
decision = "deny"
resource = "path:/.git/config"
reason = "git's config runs code"
"#,
        None,
        &[],
    );
    for path in [
        ".env",
        "app/.env",
        "settings.txt",
        "app/../.env",
        ".ENV",
        "App/.Env",
    ] {
        let r = s.call("read_file", json!({ "path": path })).await;
        denied_by(&r, "rules[0]");
        assert!(!r.text().contains("CANARY"), "{path}");
    }
    for path in [".git/config", "app/gitcfg", ".GIT/Config"] {
        let r = s.call("read_file", json!({ "path": path })).await;
        denied_by(&r, "rules[1]");
        assert!(r.text().contains("git's config runs code"), "{}", r.text());
    }
    // a write through the link is denied before the approver is asked
    let r = s
        .call(
            "write_file",
            json!({"path": "settings.txt", "content": "x"}),
        )
        .await;
    denied_by(&r, "rules[0]");
    assert!(s.approver.asked().is_empty());
    assert_eq!(
        std::fs::read_to_string(s.ws.root().join(".env")).unwrap(),
        "SECRET=CANARY-ENV\n"
    );
    // a shell redirection target is a path resource too
    let r = s
        .call("run_shell", json!({"command": "cat .ENV > out.txt"}))
        .await;
    assert!(r.is_error);
    let r = s
        .call("run_shell", json!({"command": "echo x >> settings.txt"}))
        .await;
    denied_by(&r, "rules[0]");
}

/// protected-own-config-45 and protected-gitconfig-43 (protected_path): toolgate's own
/// configuration (the workspace's toolgate.toml and a `--config` file inside the workspace)
/// is never written, and the store is neither read nor written, whatever the rules allow.
#[tokio::test]
async fn own_configuration_and_store_are_protected_even_against_allow_rules() {
    let ws = TempWorkspace::new();
    ws.sh(
        "mkdir -p ws/policy ws/.toolgate ws/data; echo x > ws/.toolgate/toolgate.db; \
           echo y > ws/data/audit.db; ln -s policy/agent.toml ws/innocent.toml",
    );
    let text = r#"
[store]
path = "data/audit.db"

[[rules]]
decision = "allow"
tool = "*"
"#;
    let tools = super::support::tools();
    let names: Vec<&str> = tools.iter().map(|t| &*t.spec().name).collect();
    std::fs::write(ws.root().join("policy/agent.toml"), text).unwrap();
    let config = toolgate_config::load(
        &ws.root(),
        Some(&ws.root().join("policy/agent.toml")),
        &names,
    )
    .unwrap();
    let pipeline = toolgate_core::Pipeline::builder(
        toolgate_core::Registry::builder()
            .tools(tools.clone())
            .build()
            .unwrap(),
    )
    .policy(config.policy())
    .build();
    let session = pipeline
        .session("s")
        .workspace(ws.workspace())
        .build()
        .unwrap();
    let call = |n: &str, tool: &str, args: serde_json::Value| {
        pipeline.dispatch(toolgate_core::ToolCall::new(n, tool, args), &session)
    };
    for (i, path) in ["policy/agent.toml", "innocent.toml", "POLICY/agent.toml"]
        .into_iter()
        .enumerate()
    {
        let r = call(
            &format!("w{i}"),
            "write_file",
            json!({"path": path, "content": "[risk]\ndefault = \"allow\"\n"}),
        )
        .await;
        denied_by(&r, "protected.config");
    }
    assert_eq!(
        std::fs::read_to_string(ws.root().join("policy/agent.toml")).unwrap(),
        text
    );
    // the configuration may be read
    let r = call("r0", "read_file", json!({"path": "policy/agent.toml"})).await;
    assert!(!r.is_error, "{}", r.text());
    for (i, path) in ["data/audit.db", "data/audit.db-wal", "DATA/audit.db"]
        .into_iter()
        .enumerate()
    {
        let r = call(&format!("s{i}"), "read_file", json!({ "path": path })).await;
        denied_by(&r, "protected.store");
    }
    // walking tools do not list the store
    let r = call("l", "list_dir", json!({"path": "data"})).await;
    assert!(!r.is_error, "{}", r.text());
    assert!(!r.text().contains("audit.db"), "{}", r.text());
    let r = call("g", "glob", json!({"pattern": "**/*.db"})).await;
    assert!(!r.text().contains("audit.db"), "{}", r.text());
    // the workspace's toolgate.toml and .git internals are protected by the tools themselves
    for (i, path) in ["toolgate.toml", ".git/config", ".toolgate/policy.toml"]
        .into_iter()
        .enumerate()
    {
        let r = call(
            &format!("t{i}"),
            "write_file",
            json!({"path": path, "content": "x"}),
        )
        .await;
        assert!(r.is_error, "{path}: {}", r.text());
        assert!(!ws.root().join(path).exists(), "{path}");
    }
}

/// Defaults: destructive tools ask (and the approver's rejection stops the call); an allow
/// over some paths covers a call only when it covers every path the call touches.
#[tokio::test]
async fn destructive_tools_ask_unless_a_rule_allows_every_resource() {
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws/src ws/docs");
    let s = Setup::new(
        ws,
        r#"
[[rules]]
decision = "allow"
tool = "write_file"
resource = "path:src/**"
"#,
        None,
        &[],
    );
    let r = s
        .call(
            "write_file",
            json!({"path": "src/a.rs", "content": "fn a() {}\n"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text());
    assert!(s.approver.asked().is_empty());
    let r = s
        .call("write_file", json!({"path": "docs/a.md", "content": "x"}))
        .await;
    assert_eq!(error(&r).0, ErrorKind::ApprovalRejected, "{}", r.text());
    assert_eq!(s.approver.asked().len(), 1);
    assert_eq!(s.approver.asked()[0].rule, "risk.destructive");
    // allow rules match as written: SRC/ is not src/
    let r = s
        .call("write_file", json!({"path": "SRC/b.rs", "content": "x"}))
        .await;
    assert_eq!(error(&r).0, ErrorKind::ApprovalRejected);
}

#[cfg(feature = "cedar")]
/// Profiles and roles: a role's profile hides tools, and an ABAC condition on a session
/// attribute (evaluated by Cedar) decides whether a rule applies.
#[tokio::test]
async fn roles_profiles_and_cedar_conditions() {
    let text = r#"
[profiles.orders]
tools = ["read_file", "write_file", "list_dir"]

[roles.support]
profiles = ["orders", "explore"]
attributes = { team = "support" }

[[rules]]
name = "orders-after-verification"
decision = "allow"
tool = "write_file"
resource = "path:orders/**"
when = 'context.attributes has owner_verified && context.attributes.owner_verified == true'

[[rules]]
name = "support-no-refunds"
decision = "deny"
resource = "path:orders/refunds"
roles = ["support"]
unless = 'context.attributes.team == "finance"'
"#;
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws/orders/refunds");
    let verified = Setup::new(ws, text, Some("support"), &["owner_verified=true"]);
    let r = verified
        .call(
            "write_file",
            json!({"path": "orders/o1.json", "content": "{}"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text());
    assert!(verified.approver.asked().is_empty());
    let r = verified
        .call(
            "write_file",
            json!({"path": "orders/refunds/r1.json", "content": "{}"}),
        )
        .await;
    denied_by(&r, "support-no-refunds");
    // run_shell is outside the role's profile
    let r = verified.call("run_shell", json!({"command": "true"})).await;
    assert_eq!(error(&r).0, ErrorKind::UnknownTool);

    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws/orders");
    let unverified = Setup::new(ws, text, Some("support"), &["owner_verified=false"]);
    let r = unverified
        .call(
            "write_file",
            json!({"path": "orders/o1.json", "content": "{}"}),
        )
        .await;
    assert_eq!(error(&r).0, ErrorKind::ApprovalRejected, "{}", r.text());
    assert!(!unverified.ws.root().join("orders/o1.json").exists());
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws/orders");
    let no_attr = Setup::new(ws, text, Some("support"), &[]);
    let r = no_attr
        .call(
            "write_file",
            json!({"path": "orders/o1.json", "content": "{}"}),
        )
        .await;
    assert_eq!(error(&r).0, ErrorKind::ApprovalRejected, "{}", r.text());
}

#[cfg(feature = "cedar")]
/// A condition sees the call: its tool, role, canonical paths and arguments (integers as
/// Cedar longs, absent members absent), so one rule can say "no deep reads of this file".
#[tokio::test]
async fn cedar_conditions_see_the_tool_role_paths_and_arguments() {
    let text = r#"
[[rules]]
name = "no-deep-offsets"
decision = "deny"
tool = "read_file"
when = 'context.tool == "read_file" && context.role == "" && context.paths.contains("notes/a.txt") && context.arguments has offset && context.arguments.offset > 2 && !(context.arguments has limit)'
"#;
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws/notes; seq 1 10 > ws/notes/a.txt; seq 1 10 > ws/notes/b.txt");
    let s = Setup::new(ws, text, None, &[]);
    for args in [
        json!({"path": "notes/a.txt", "offset": 3}),
        // another spelling of the same canonical path
        json!({"path": "./notes/../notes/a.txt", "offset": 9}),
    ] {
        let r = s.call("read_file", args.clone()).await;
        denied_by(&r, "no-deep-offsets");
    }
    for args in [
        json!({"path": "notes/a.txt", "offset": 2}),
        json!({"path": "notes/a.txt"}),
        json!({"path": "notes/b.txt", "offset": 3}),
        json!({"path": "notes/a.txt", "offset": 3, "limit": 2}),
    ] {
        let r = s.call("read_file", args.clone()).await;
        assert!(!r.is_error, "{args}: {}", r.text());
    }
    assert!(s.approver.asked().is_empty());
}

#[cfg(feature = "cedar")]
/// A condition on session attributes alone is answered once per session and kept on that
/// session: two sessions of one pipeline with opposite attributes, their calls interleaved,
/// each keep their own answer. A condition on the call (here its tool, `resource`) is answered
/// on every call of one session.
#[tokio::test]
async fn session_conditions_are_kept_per_session_and_call_conditions_per_call() {
    let text = r#"
[[rules]]
name = "verified-writes"
decision = "allow"
tool = "write_file"
when = 'context.attributes has verified && context.attributes.verified'

[[rules]]
name = "no-listing"
decision = "deny"
tool = "*"
when = 'resource == Toolgate::Tool::"list_dir"'
"#;
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws/notes");
    let verified = Setup::new(ws, text, None, &["verified=true"]);
    let unverified = verified
        .pipeline
        .session("s2")
        .workspace(verified.ws.workspace())
        .attribute("verified", json!(false))
        .build()
        .unwrap();
    for round in 0..2 {
        let path = format!("notes/{round}.txt");
        let r = verified
            .call("write_file", json!({"path": path, "content": "v"}))
            .await;
        assert!(!r.is_error, "round {round}: {}", r.text());
        let r = verified
            .pipeline
            .dispatch(
                ToolCall::new(
                    format!("u{round}"),
                    "write_file",
                    json!({"path": format!("notes/u{round}.txt"), "content": "u"}),
                ),
                &unverified,
            )
            .await;
        assert_eq!(error(&r).0, ErrorKind::ApprovalRejected, "{}", r.text());
        assert!(!verified
            .ws
            .root()
            .join(format!("notes/u{round}.txt"))
            .exists());
        let r = verified
            .call("read_file", json!({"path": format!("notes/{round}.txt")}))
            .await;
        assert!(!r.is_error, "{}", r.text());
        let r = verified.call("list_dir", json!({"path": "notes"})).await;
        denied_by(&r, "no-listing");
    }
    // the unverified session was asked once per write, the verified one never
    assert_eq!(verified.approver.asked().len(), 2);
}

/// Past 64 rules (more than one word of path hits per path) and with several paths in one
/// call, each path's matches land on its own rules: a deny from rule 66 on the second of three
/// paths holds, an allow covers a call only when every path is covered, and protected paths
/// (the slots after the rules) still deny.
#[test]
fn many_rules_and_several_paths_keep_their_matches_apart() {
    use toolgate_core::{Access, Decision, Policy, PolicyInput, ResolvedResource};
    let mut text = String::new();
    for i in 0..66 {
        text.push_str(&format!(
            "[[rules]]\ndecision = \"ask\"\nresource = \"path:filler{i}/**\"\n"
        ));
    }
    text.push_str(
        r#"
[[rules]]
name = "deep-deny"
decision = "deny"
resource = "path:deep/**"

[[rules]]
name = "src-allow"
decision = "allow"
resource = "path:src/**"

[[rules]]
name = "docs-allow"
decision = "allow"
resource = "path:docs/**"
"#,
    );
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws/src ws/deep ws/docs ws/other ws/filler65");
    let s = Setup::new(ws, &text, None, &[]);
    let policy = super::support::load(&s.ws, &text).unwrap().config_policy();
    assert!(policy.len() > 64);
    let spec = s
        .pipeline
        .registry()
        .get("read_file", None)
        .unwrap()
        .spec()
        .clone();
    let decide = |paths: &[(&str, Access)]| {
        let workspace = s.ws.workspace();
        let resources: Vec<ResolvedResource> = paths
            .iter()
            .map(|(p, access)| ResolvedResource::Path {
                path: workspace.resolve(p).unwrap(),
                access: *access,
            })
            .collect();
        policy.decide(&PolicyInput {
            tool: &spec,
            resources: &resources,
            arguments: &json!({}),
            session: &s.session,
        })
    };
    let v = decide(&[
        ("src/a.rs", Access::Read),
        ("deep/x", Access::Read),
        ("docs/b.md", Access::Read),
    ]);
    assert_eq!((v.decision, &*v.rule), (Decision::Deny, "deep-deny"));
    let v = decide(&[("src/a.rs", Access::Read), ("docs/b.md", Access::Read)]);
    assert_eq!((v.decision, &*v.rule), (Decision::Allow, "src-allow"));
    // one path no allow covers: the allow does not decide the call
    let v = decide(&[("src/a.rs", Access::Read), ("other/c", Access::Read)]);
    assert_eq!((v.decision, &*v.rule), (Decision::Allow, "risk.default"));
    let v = decide(&[("other/c", Access::Read), ("filler65/x", Access::Read)]);
    assert_eq!((v.decision, &*v.rule), (Decision::Ask, "rules[65]"));
    let v = decide(&[("src/a.rs", Access::Read), ("toolgate.toml", Access::Write)]);
    assert_eq!((v.decision, &*v.rule), (Decision::Deny, "protected.config"));
    let v = decide(&[("toolgate.toml", Access::Read)]);
    assert_eq!(v.decision, Decision::Allow);
    assert_eq!(
        policy.decide_path(std::path::Path::new("deep/y"), Access::Read, "default"),
        Decision::Deny
    );
    assert_eq!(
        policy.decide_path(std::path::Path::new("filler65/y"), Access::Read, "default"),
        Decision::Ask
    );
    assert_eq!(
        policy.decide_path(
            std::path::Path::new("toolgate.toml"),
            Access::Write,
            "default"
        ),
        Decision::Deny
    );
}

/// Command rules from the configuration: each simple command of a shell line is matched by
/// word prefix; a deny on one command denies the whole line, before anything runs.
#[tokio::test]
async fn command_rules_apply_to_every_simple_command() {
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws; touch ws/keep.txt");
    let s = Setup::new(
        ws,
        r#"
[[rules]]
decision = "allow"
resource = "command:git status"

[[rules]]
name = "no-push"
decision = "deny"
resource = "command:git push"

[[rules]]
decision = "deny"
resource = "command:rm"
"#,
        None,
        &[],
    );
    for command in [
        "git push origin main",
        "git status && git push",
        "git status; /usr/bin/git push --force",
        "bash -c 'git push'",
        "timeout 5 git push",
    ] {
        let r = s.call("run_shell", json!({ "command": command })).await;
        let (kind, _) = error(&r);
        assert_eq!(kind, ErrorKind::PermissionDenied, "{command}: {}", r.text());
    }
    let r = s
        .call("run_shell", json!({"command": "rm -rf keep.txt"}))
        .await;
    assert_eq!(error(&r).0, ErrorKind::PermissionDenied);
    assert!(s.ws.root().join("keep.txt").exists());
    assert!(s.approver.asked().is_empty(), "denies never ask");
    // `git pushx` is not `git push`: not denied, not allowed either, so it asks
    let r = s.call("run_shell", json!({"command": "git pushx"})).await;
    assert_eq!(error(&r).0, ErrorKind::ApprovalRejected, "{}", r.text());
    // an allowed command is not asked about (it may still fail where the sandbox is missing)
    let before = s.approver.asked().len();
    let r = s
        .call("run_shell", json!({"command": "git status --short"}))
        .await;
    assert_eq!(s.approver.asked().len(), before, "{}", r.text());
    if let Some(e) = &r.error {
        assert!(
            !matches!(
                e.kind,
                ErrorKind::PermissionDenied | ErrorKind::ApprovalRejected
            ),
            "{}",
            r.text()
        );
    }
}

/// What a file the policy keeps from the call holds is not told before the policy decides:
/// edit_file's guard (which runs first) does not say whether `old_string` is in a denied file
/// (it answered `no_match` or went on to the deny, which spelled the file out character by
/// character), a missing path's near names leave denied ones out, and an edit of a file whose
/// reading is denied is denied (its diff showed the lines around the change).
#[tokio::test]
async fn a_denied_files_content_and_name_are_not_told_by_errors() {
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws/secrets; printf 'PASSWORD=CANARY\\nX=1\\n' > ws/.env; echo K=1 > ws/secrets/key.txt");
    let s = Setup::new(
        ws,
        r#"
[[rules]]
decision = "deny"
resource = "path:.env"

[[rules]]
decision = "deny"
resource = "path:secrets/*.txt"
"#,
        None,
        &[],
    );
    for old in ["PASSWORD=Z", "PASSWORD=C"] {
        let r = s
            .call(
                "edit_file",
                json!({"path": ".env", "old_string": old, "new_string": "y"}),
            )
            .await;
        assert_eq!(
            error(&r).0,
            ErrorKind::PermissionDenied,
            "{old}: {}",
            r.text()
        );
    }
    for (path, denied) in [(".envx", "\".env\""), ("secrets/key.tx", "key.txt\"")] {
        let r = s.call("read_file", json!({ "path": path })).await;
        assert_eq!(error(&r).1.as_deref(), Some("not_found"), "{}", r.text());
        assert!(!r.text().contains(denied), "{path}: {}", r.text());
    }
    let s2 = Setup::new(
        TempWorkspace::new(),
        r#"
[[rules]]
decision = "deny"
resource = "path:.env"
access = "read"

[[rules]]
decision = "allow"
tool = "edit_file"
"#,
        None,
        &[],
    );
    s2.ws
        .sh("mkdir -p ws; printf 'PASSWORD=CANARY\\nX=1\\n' > ws/.env");
    let r = s2
        .call(
            "edit_file",
            json!({"path": ".env", "old_string": "X=1", "new_string": "X=2"}),
        )
        .await;
    assert_eq!(error(&r).0, ErrorKind::PermissionDenied, "{}", r.text());
    assert!(!r.text().contains("CANARY"), "{}", r.text());
    assert_eq!(
        std::fs::read_to_string(s2.ws.root().join(".env")).unwrap(),
        "PASSWORD=CANARY\nX=1\n"
    );
}

/// A rule naming a link holds for what it leads to: `.env` linking to `settings/prod.env`,
/// `secrets` to `private` (read_file returned them under the link's name, and under their
/// own), and a write rule on `config/prod.toml` linking to `envs/prod.toml` (write_file
/// wrote through it).
#[tokio::test]
async fn a_rule_naming_a_link_holds_for_what_it_leads_to() {
    let ws = TempWorkspace::new();
    ws.sh(
        "mkdir -p ws/settings ws/private ws/envs ws/config; echo PW=CANARY > ws/settings/prod.env; \
         ln -s settings/prod.env ws/.env; echo K=1 > ws/private/key.txt; ln -s private ws/secrets; \
         echo prod=1 > ws/envs/prod.toml; ln -s ../envs/prod.toml ws/config/prod.toml",
    );
    let s = Setup::new(
        ws,
        r#"
[[rules]]
decision = "deny"
resource = "path:.env"

[[rules]]
decision = "deny"
resource = "path:secrets/**"

[[rules]]
decision = "deny"
resource = "path:config/prod.toml"
access = "write"

[[rules]]
decision = "allow"
tool = "write_file"
"#,
        None,
        &[],
    );
    for path in [
        ".env",
        "./.env",
        "secrets/key.txt",
        "secrets/../secrets/key.txt",
        // the same files under their own names: the rules name the links, and the operator
        // means what they hold (run_shell's sandbox covers the targets too)
        "settings/prod.env",
        "private/key.txt",
    ] {
        let r = s.call("read_file", json!({ "path": path })).await;
        assert_eq!(
            error(&r).0,
            ErrorKind::PermissionDenied,
            "{path}: {}",
            r.text()
        );
    }
    let r = s
        .call(
            "write_file",
            json!({"path": "config/prod.toml", "content": "prod=HACKED\n"}),
        )
        .await;
    assert_eq!(error(&r).0, ErrorKind::PermissionDenied, "{}", r.text());
    assert_eq!(
        std::fs::read_to_string(s.ws.root().join("envs/prod.toml")).unwrap(),
        "prod=1\n"
    );
    // the write rule on the link holds for the file under its own name too
    let r = s
        .call(
            "write_file",
            json!({"path": "envs/prod.toml", "content": "prod=HACKED\n"}),
        )
        .await;
    assert_eq!(error(&r).0, ErrorKind::PermissionDenied, "{}", r.text());
    // a write rule stays a write rule for the target: reading it is allowed
    let r = s.call("read_file", json!({"path": "envs/prod.toml"})).await;
    assert!(r.error.is_none(), "{}", r.text());
}

/// What a program the rules cannot read may run (an argument that reads as a command line:
/// `./tool` may be a shell) is denied and asked about by the configuration's rules, and needs
/// no allow rule of its own: `allow command:./tool` still covers `./tool --note 'fix it'`.
#[tokio::test]
async fn what_a_program_may_run_is_restricted_but_needs_no_allow() {
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws");
    let s = Setup::new(
        ws,
        r#"
[[rules]]
decision = "allow"
resource = "command:./tool"

[[rules]]
decision = "deny"
resource = "command:touch"

[[rules]]
decision = "ask"
resource = "command:git push"
"#,
        None,
        &[],
    );
    for command in [
        "./tool --note 'touch x'",
        "./tool --note 'a; /usr/bin/touch x'",
        "/usr/bin/t[o]uch x",
    ] {
        let r = s.call("run_shell", json!({ "command": command })).await;
        assert_eq!(
            error(&r).0,
            ErrorKind::PermissionDenied,
            "{command}: {}",
            r.text()
        );
    }
    assert!(s.approver.asked().is_empty(), "denies never ask");
    let r = s
        .call(
            "run_shell",
            json!({"command": "./tool --note 'git push origin'"}),
        )
        .await;
    assert_eq!(error(&r).0, ErrorKind::ApprovalRejected, "{}", r.text());
    assert_eq!(s.approver.asked().len(), 1);
    let r = s
        .call(
            "run_shell",
            json!({"command": "./tool --note 'fix the bug'"}),
        )
        .await;
    assert_eq!(s.approver.asked().len(), 1, "allowed: {}", r.text());
    if let Some(e) = &r.error {
        assert!(
            !matches!(
                e.kind,
                ErrorKind::PermissionDenied | ErrorKind::ApprovalRejected
            ),
            "{}",
            r.text()
        );
    }
}

/// Deny rules on a subcommand match it after the program's global options, also when the rule
/// is for a role (matched by the configuration's policy, not the shell's command rules), and a
/// standing grant for the whole program does not beat them: grants answer only `ask`.
#[tokio::test]
async fn a_deny_on_a_subcommand_matches_every_spelling_and_beats_a_grant() {
    use toolgate_core::grant::{GrantScope, GrantStore, MemoryGrantStore, NewGrant};
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws");
    let grants = Arc::new(MemoryGrantStore::new());
    grants
        .insert(&NewGrant {
            tool_pattern: "run_shell".into(),
            resource_patterns: vec!["command:git".into()],
            scope: GrantScope::Always,
            session: None,
            created_us: 1,
            expires_us: None,
            granted_by: Some("test".into()),
            note: None,
            principal: None,
        })
        .unwrap();
    let s = Setup::with_grants(
        ws,
        r#"
[[rules]]
name = "no-tags"
decision = "deny"
resource = "command:git tag"
roles = ["dev"]

[[rules]]
name = "no-publish"
decision = "deny"
resource = "command:cargo publish"
when = 'context.role == "dev"'

[roles.dev]
profiles = ["default"]
"#,
        Some("dev"),
        &[],
        Some(grants),
    );
    for (command, rule) in [
        ("git tag v5", "no-tags"),
        ("git -C . tag v6", "no-tags"),
        ("git -c a.b=c tag v7", "no-tags"),
        ("git --git-dir=.git --no-pager tag v8", "no-tags"),
        ("git -c alias.t=tag t v9", "no-tags"),
        ("/usr/bin/git -C sub tag", "no-tags"),
        ("cargo +nightly publish", "no-publish"),
        ("cargo -Zx --locked publish --dry-run", "no-publish"),
        ("cargo --config alias.p=publish p", "no-publish"),
    ] {
        let r = s.call("run_shell", json!({ "command": command })).await;
        let (kind, _) = error(&r);
        assert_eq!(kind, ErrorKind::PermissionDenied, "{command}: {}", r.text());
        assert!(r.text().contains(rule), "{command}: {}", r.text());
    }
    assert!(s.approver.asked().is_empty(), "denies never ask");
    // what the grant covers is answered by it (and may fail where the sandbox is missing)
    let r = s
        .call("run_shell", json!({"command": "git -C . status"}))
        .await;
    assert!(s.approver.asked().is_empty(), "{}", r.text());
    if let Some(e) = &r.error {
        assert!(
            !matches!(
                e.kind,
                ErrorKind::PermissionDenied | ErrorKind::ApprovalRejected
            ),
            "{}",
            r.text()
        );
    }
}

/// protected-own-config-45, the read side under a configuration's policy: reading this
/// workspace's store (`.toolgate`, which the policy's `protected.store` rule also covers) and
/// a store nested deeper (another toolgate workspace's, which that rule does not reach) are
/// the same recoverable `unsafe_input` / `protected_path` from every read tool, refused before
/// the policy is asked, each with a message saying which store it is; nothing of either is
/// shown, and a file beside them still reads.
#[tokio::test]
async fn protected_own_config_45_reading_any_store_is_one_recoverable_refusal() {
    let ws = TempWorkspace::new();
    ws.sh(
        "mkdir -p ws/.toolgate ws/sub/.toolgate; echo ROOT-CANARY > ws/.toolgate/audit.jsonl; \
         echo NESTED-CANARY > ws/sub/.toolgate/audit.jsonl; echo ok > ws/sub/a.txt; \
         ln -s .toolgate ws/root-link; ln -s sub/.toolgate ws/nested-link",
    );
    let root = ws.root();
    let s = Setup::new(
        ws,
        "[[rules]]\ndecision = \"allow\"\ntool = \"*\"\n",
        None,
        &[],
    );
    let refused = |r: &ToolResult, nested: bool| {
        assert_eq!(
            error(r),
            (ErrorKind::UnsafeInput, Some("protected_path".to_string())),
            "{}",
            r.text()
        );
        assert!(r.error.as_ref().unwrap().is_recoverable(), "{}", r.text());
        let text = r.text().to_lowercase();
        assert!(!text.contains("canary"), "{text}");
        if nested {
            assert!(
                text.contains("sub/.toolgate, the toolgate store of another workspace nested"),
                "{text}"
            );
        } else {
            assert!(
                text.contains("this workspace's toolgate store (.toolgate)"),
                "{text}"
            );
        }
    };
    let abs = root.join(".toolgate/audit.jsonl");
    for (path, nested) in [
        (".toolgate/audit.jsonl", false),
        ("./.TOOLGATE/audit.jsonl", false),
        ("sub/../.toolgate/audit.jsonl", false),
        (abs.to_str().unwrap(), false),
        ("sub/.toolgate/audit.jsonl", true),
        ("sub/.Toolgate/./audit.jsonl", true),
    ] {
        refused(&s.call("read_file", json!({ "path": path })).await, nested);
        refused(
            &s.call("search_code", json!({"pattern": "CANARY", "path": path}))
                .await,
            nested,
        );
    }
    for (path, nested) in [(".toolgate", false), ("sub/.toolgate", true)] {
        refused(&s.call("list_dir", json!({ "path": path })).await, nested);
        refused(
            &s.call("glob", json!({"pattern": "*", "path": path})).await,
            nested,
        );
    }
    // through a link: nested, the tool refuses it when it resolves the path; at the root the
    // policy's rule sees the resolved path first (the guard does no I/O on the read path)
    refused(
        &s.call("read_file", json!({"path": "nested-link/audit.jsonl"}))
            .await,
        true,
    );
    denied_by(
        &s.call("read_file", json!({"path": "root-link/audit.jsonl"}))
            .await,
        "protected.store",
    );
    // a name that only passes through the store is not in it
    let r = s
        .call("read_file", json!({"path": ".toolgate/../sub/a.txt"}))
        .await;
    assert!(!r.is_error, "{}", r.text());
    assert!(s.approver.asked().is_empty());
}

/// A rule naming `read_file` holds for `read_resource` (MCP's `resources/read`), which reads
/// the same file by its `file:///` URI: a deny over a path, and a deny of the tool itself
/// (which hides it). A rule naming `read_resource` does not reach `read_file`.
#[tokio::test]
async fn a_rule_naming_read_file_holds_for_read_resource() {
    let ws = TempWorkspace::new();
    ws.sh("mkdir -p ws/secret; echo CANARY > ws/secret/x.txt; echo ok > ws/a.txt");
    let s = Setup::new(
        ws,
        r#"
[[rules]]
name = "no-secret"
decision = "deny"
tool = "read_file"
resource = "path:secret/**"
"#,
        None,
        &[],
    );
    let r = s
        .call("read_resource", json!({"uri": "file:///secret/x.txt"}))
        .await;
    denied_by(&r, "no-secret");
    assert!(!r.text().contains("CANARY"));
    let r = s
        .call("read_resource", json!({"uri": "file:///a.txt"}))
        .await;
    assert!(!r.is_error, "{}", r.text());
    let ws = TempWorkspace::new();
    ws.sh("echo ok > ws/a.txt");
    let s = Setup::new(
        ws,
        r#"
[[rules]]
decision = "deny"
tool = "read_f*"
[[rules]]
decision = "deny"
tool = "read_resource"
resource = "path:a.txt"
"#,
        None,
        &[],
    );
    let r = s
        .call("read_resource", json!({"uri": "file:///a.txt"}))
        .await;
    assert_eq!(error(&r).0, ErrorKind::UnknownTool, "{}", r.text());
    let ws = TempWorkspace::new();
    ws.sh("echo ok > ws/a.txt");
    let s = Setup::new(
        ws,
        r#"
[[rules]]
name = "resources-only"
decision = "deny"
tool = "read_resource"
resource = "path:a.txt"
"#,
        None,
        &[],
    );
    let r = s.call("read_file", json!({"path": "a.txt"})).await;
    assert!(!r.is_error, "{}", r.text());
    denied_by(
        &s.call("read_resource", json!({"uri": "file:///a.txt"}))
            .await,
        "resources-only",
    );
}
