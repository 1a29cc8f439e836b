//! Identity through the `toolgate` binary (issue 16): `toolgate serve --http` as an OAuth 2.1
//! resource server in front of a real authorization server on 127.0.0.1
//! (`tests/clients/oauth_server.py`: the MCP Python SDK's authorization-server routes, JWTs
//! signed with joserfc, or opaque tokens with RFC 7662 introspection), driven by the real MCP
//! Python SDK's OAuth client and by raw requests (`tests/clients/oauth_client.py`).
//!
//! Without `TOOLGATE_TEST_PYTHON` these tests are ignored (failed under CI).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolgate_test_support::clients::{python_script, run_ok};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");
pub(crate) const INTROSPECTION_SECRET: &str = "introspection-s3cret";

pub(crate) fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name)
}

/// The authorization server, killed when dropped.
pub(crate) struct AuthServer {
    child: Child,
    pub(crate) issuer: String,
}

impl AuthServer {
    pub(crate) fn start(opaque: bool) -> Option<AuthServer> {
        let mut cmd = python_script(script("oauth_server.py"))?;
        if opaque {
            cmd.arg("--opaque");
        }
        let mut child = cmd
            .env("TOOLGATE_TEST_INTROSPECTION_SECRET", INTROSPECTION_SECRET)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting the authorization server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("http://127.0.0.1:"), "{line:?}");
        Some(AuthServer {
            child,
            issuer: line.trim().to_string(),
        })
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolgate serve --http 127.0.0.1:0` on `ws`; its stderr is kept in `log`.
pub(crate) struct Served {
    child: Child,
    pub(crate) url: String,
    pub(crate) log: Arc<Mutex<String>>,
}

impl Served {
    pub(crate) fn start(ws: &Path, env: &[(&str, &str)]) -> Served {
        let mut child = Command::new(TOOLGATE)
            .args(["serve", "--http", "127.0.0.1:0", "--workspace"])
            .arg(ws)
            .env_remove("TOOLGATE_TOKEN")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting toolgate serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Arc::new(Mutex::new(String::new()));
        let mut url = None;
        while url.is_none() {
            let Some(Ok(line)) = lines.next() else { break };
            log.lock().unwrap().push_str(&line);
            if let Some(u) = line.strip_prefix("toolgate: serving MCP at ") {
                url = Some(u.trim().to_string());
            }
        }
        let keep = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let mut l = keep.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        let url =
            url.unwrap_or_else(|| panic!("toolgate serve did not start: {}", log.lock().unwrap()));
        Served { child, url, log }
    }

    /// SIGTERM, then waits: the audit records are committed.
    pub(crate) fn stop(mut self) {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A workspace with `toolgate.toml` = `config` (after the `[server.auth]` of `issuer`) and a
/// few files.
pub(crate) fn workspace(issuer: &str, auth_extra: &str, config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    std::fs::create_dir(dir.path().join("secret")).unwrap();
    std::fs::write(dir.path().join("secret/x.txt"), "classified\n").unwrap();
    std::fs::write(
        dir.path().join("toolgate.toml"),
        format!(
            "[server.auth]\nissuer = \"{issuer}\"\nclaims = [\"groups\"]\nrequired_scopes = \
             [\"mcp:tools\"]\n{auth_extra}\n{config}"
        ),
    )
    .unwrap();
    dir
}

pub(crate) const ROLES: &str = r#"
[server.auth.roles]
admin = 'context.attributes.groups.contains("toolgate-admins")'
staff = 'context.attributes.groups.contains("staff")'

[roles.admin]
profiles = ["default"]
[roles.staff]
profiles = ["explore"]

# hidden from bob: denied to him whatever the arguments
[[rules]]
decision = "deny"
tool = "list_dir"
when = 'principal == Toolgate::Principal::"bob"'

# the same rule, two decisions: only the admins read secret/
[[rules]]
decision = "deny"
tool = "read_file"
resource = "path:secret/**"
unless = 'context.attributes.groups.contains("toolgate-admins")'
"#;

/// The SDK's OAuth flow as `user`, then tools/list and `calls`.
pub(crate) fn flow(url: &str, user: &str, calls: Value, mode: &str) -> Value {
    let mut cmd = python_script(script("oauth_client.py")).unwrap();
    cmd.args([
        "flow", "--url", url, "--user", user, "--mode", mode, "--calls",
    ])
    .arg(calls.to_string());
    let out = run_ok(cmd, Duration::from_secs(120));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Raw initialize requests with the tokens `cases` mint.
pub(crate) fn probe(url: &str, issuer: &str, cases: Value) -> Value {
    let mut cmd = python_script(script("oauth_client.py")).unwrap();
    cmd.args(["probe", "--url", url, "--issuer", issuer, "--cases"])
        .arg(cases.to_string());
    let out = run_ok(cmd, Duration::from_secs(120));
    serde_json::from_slice(&out.stdout).unwrap()
}

pub(crate) fn kinds(result: &Value) -> Vec<(String, bool)> {
    result["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["is_error"] == true,
            )
        })
        .collect()
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn the_sdks_oauth_client_discovers_logs_in_and_two_principals_see_and_get_different_things() {
    let Some(auth) = AuthServer::start(false) else {
        return;
    };
    let ws = workspace(&auth.issuer, "", ROLES);
    let served = Served::start(ws.path(), &[]);
    let calls = json!([
        ["read_file", {"path": "secret/x.txt"}],
        ["list_dir", {"path": "."}],
        ["glob", {"pattern": "*.txt"}],
        ["write_file", {"path": "w.txt", "content": "x"}],
    ]);
    let alice = flow(&served.url, "alice", calls.clone(), "legacy");
    let bob = flow(&served.url, "bob", calls.clone(), "2026-07-28");
    // discovery from the 401: RFC 9728 metadata, then RFC 8414, registration, token
    let discovery: Vec<&str> = alice["discovery"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        discovery[0].ends_with("/.well-known/oauth-protected-resource/mcp"),
        "{discovery:?}"
    );
    assert!(
        discovery[1].ends_with("/.well-known/oauth-authorization-server"),
        "{discovery:?}"
    );
    assert!(
        discovery.iter().any(|d| d.ends_with("/token")),
        "{discovery:?}"
    );
    // alice (admin: every tool, the HTTP tools among them) and bob (staff: the explore
    // profile, which has no open_world tool, list_dir denied to him)
    assert_eq!(
        alice["tools"],
        json!([
            "edit_file",
            "glob",
            "http_fetch",
            "http_request",
            "list_dir",
            "read_file",
            "read_result",
            "run_shell",
            "search_code",
            "write_file"
        ])
    );
    assert_eq!(
        bob["tools"],
        json!(["glob", "read_file", "read_result", "search_code"])
    );
    // the same rules, different decisions; a hidden tool is an unknown tool
    let a = kinds(&alice);
    assert_eq!(a[0], ("read_file".into(), false), "{alice}");
    assert_eq!(a[1], ("list_dir".into(), false), "{alice}");
    assert_eq!(a[2], ("glob".into(), false), "{alice}");
    let b = kinds(&bob);
    assert_eq!(b[0], ("read_file".into(), true), "{bob}");
    assert!(
        bob["calls"][0]["text"]
            .as_str()
            .unwrap()
            .contains("permission_denied"),
        "{bob}"
    );
    assert!(
        bob["calls"][1]["text"]
            .as_str()
            .unwrap()
            .contains("no tool \"list_dir\""),
        "{bob}"
    );
    assert_eq!(b[2], ("glob".into(), false), "{bob}");
    assert!(
        bob["calls"][3]["text"]
            .as_str()
            .unwrap()
            .contains("no tool \"write_file\""),
        "{bob}"
    );
    served.stop();
    // the audit names the principal, and filters by it
    let out = Command::new(TOOLGATE)
        .args(["audit", "--json", "--principal", "bob", "-w"])
        .arg(ws.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 4, "{records:?}");
    for r in &records {
        assert_eq!(r["principal"]["subject"], "bob", "{r}");
        assert_eq!(r["principal"]["issuer"], auth.issuer.as_str(), "{r}");
    }
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn bad_tokens_of_every_kind_are_refused_and_a_rotated_key_is_fetched() {
    let Some(auth) = AuthServer::start(false) else {
        return;
    };
    let ws = workspace(&auth.issuer, "", "");
    let served = Served::start(ws.path(), &[]);
    let aud = served.url.as_str();
    let other_aud = "http://127.0.0.1:1/mcp";
    let cases = json!([
        null,
        {"aud": aud},
        {"aud": aud, "exp_in": -120},
        {"aud": aud, "exp_in": -10},
        {"aud": aud, "nbf_in": 10},
        {"aud": aud, "nbf_in": 120},
        {"aud": aud, "iss": "http://127.0.0.1:1/"},
        {"aud": other_aud},
        {"aud": aud, "drop": ["aud"]},
        {"aud": aud, "drop": ["sub"]},
        {"aud": aud, "key": "forged"},
        {"aud": aud, "alg": "none"},
        {"aud": aud, "alg": "HS256"},
        {"aud": aud, "scope": "mcp:admin"},
        {"raw": "not.a.jwt"},
        {"aud": aud, "key": "unknown"},
    ]);
    let report = probe(&served.url, &auth.issuer, cases);
    let statuses: Vec<u64> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_u64().unwrap())
        .collect();
    assert_eq!(
        statuses,
        [401, 200, 401, 200, 200, 401, 401, 401, 401, 401, 401, 401, 401, 403, 401, 401],
        "{report}"
    );
    let challenge = |i: usize| {
        report["cases"][i]["www_authenticate"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        served.url.trim_end_matches("/mcp")
    );
    assert_eq!(
        challenge(0),
        format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"mcp:tools\"")
    );
    assert!(
        challenge(2).contains("error=\"invalid_token\""),
        "{}",
        challenge(2)
    );
    assert!(
        challenge(13).contains("error=\"insufficient_scope\""),
        "{}",
        challenge(13)
    );
    assert!(
        challenge(13).contains("scope=\"mcp:tools\""),
        "{}",
        challenge(13)
    );
    assert_eq!(report["metadata"]["resource"], aud);
    assert_eq!(
        report["metadata"]["authorization_servers"],
        json!([auth.issuer])
    );
    // a rotated key: the unknown key id makes one refresh (more than MIN_REFRESH after the
    // last), then it is accepted; a token of the dropped key, accepted (and remembered) just
    // before, is refused from then on
    std::thread::sleep(Duration::from_millis(5500));
    let rotated = probe(
        &served.url,
        &auth.issuer,
        json!([
            {"aud": aud},
            {"again": 0},
            {"control": ["/test/rotate", {}], "mint": {"aud": aud}},
            {"aud": aud},
            {"again": 0},
        ]),
    );
    let statuses: Vec<u64> = rotated["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [200, 200, 200, 200, 401], "{rotated}");
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn the_jwks_endpoint_down_fails_closed_with_a_clear_log() {
    let Some(auth) = AuthServer::start(false) else {
        return;
    };
    let ws = workspace(&auth.issuer, "", "");
    let served = Served::start(ws.path(), &[]);
    let aud = served.url.as_str();
    let report = probe(
        &served.url,
        &auth.issuer,
        json!([{"control": ["/test/jwks", {"down": true}], "mint": {"aud": aud}}]),
    );
    assert_eq!(report["cases"][0]["status"], 503, "{report}");
    std::thread::sleep(Duration::from_millis(300));
    let log = served.log.lock().unwrap().clone();
    assert!(
        log.contains("cannot fetch the authorization server's signing keys"),
        "{log}"
    );
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn opaque_tokens_are_introspected() {
    let Some(auth) = AuthServer::start(true) else {
        return;
    };
    let extra = format!(
        "introspection_endpoint = \"{}introspect\"\nclient_id_env = \"TG_CLIENT_ID\"\n\
         client_secret_env = \"TG_CLIENT_SECRET\"",
        auth.issuer
    );
    let ws = workspace(&auth.issuer, &extra, ROLES);
    let served = Served::start(
        ws.path(),
        &[
            ("TG_CLIENT_ID", "toolgate"),
            ("TG_CLIENT_SECRET", INTROSPECTION_SECRET),
        ],
    );
    let alice = flow(
        &served.url,
        "alice",
        json!([["read_file", {"path": "secret/x.txt"}]]),
        "legacy",
    );
    assert_eq!(kinds(&alice), [("read_file".to_string(), false)], "{alice}");
    let aud = served.url.as_str();
    let report = probe(
        &served.url,
        &auth.issuer,
        json!([{"raw": "never-issued"}, {"aud": "http://127.0.0.1:1/mcp"}, {"aud": aud, "exp_in": -120}, {"aud": aud}]),
    );
    let statuses: Vec<u64> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [401, 401, 401, 200], "{report}");
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn rate_limits_are_per_principal_and_the_daily_quota_survives_a_restart() {
    let Some(auth) = AuthServer::start(false) else {
        return;
    };
    let limits = r#"
[[limits.rate]]
per = "principal"
per_minute = 2
burst = 2
tool = "glob"

[limits.quota]
calls_per_day = 4
"#;
    let ws = workspace(&auth.issuer, "", limits);
    let served = Served::start(ws.path(), &[]);
    let glob = json!(["glob", {"pattern": "*.txt"}]);
    let alice = flow(&served.url, "alice", json!([glob, glob, glob]), "legacy");
    let calls = alice["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], false, "{alice}");
    assert_eq!(calls[1]["is_error"], false, "{alice}");
    let limited = calls[2]["text"].as_str().unwrap();
    assert!(limited.starts_with("rate_limited"), "{alice}");
    assert!(limited.contains("send the call again in"), "{alice}");
    // bob's bucket is his own
    let bob = flow(&served.url, "bob", json!([glob]), "legacy");
    assert_eq!(bob["calls"][0]["is_error"], false, "{bob}");
    // alice has made 2 calls today (the refused one spent no quota): 2 more, then none
    let read = json!(["read_file", {"path": "notes.txt"}]);
    let alice = flow(&served.url, "alice", json!([read, read, read]), "legacy");
    let calls = alice["calls"].as_array().unwrap();
    assert_eq!(calls[1]["is_error"], false, "{alice}");
    assert!(
        calls[2]["text"].as_str().unwrap().contains("daily quota"),
        "{alice}"
    );
    served.stop();
    // a restart does not reset the quota
    let served = Served::start(ws.path(), &[]);
    let again = flow(&served.url, "alice", json!([read]), "legacy");
    assert!(
        again["calls"][0]["text"]
            .as_str()
            .unwrap()
            .contains("daily quota"),
        "{again}"
    );
    let bob = flow(&served.url, "bob", json!([read]), "legacy");
    assert_eq!(bob["calls"][0]["is_error"], false, "{bob}");
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn requests_over_a_request_rate_limit_get_429_with_retry_after_per_principal() {
    let Some(auth) = AuthServer::start(false) else {
        return;
    };
    let limits = r#"
[[limits.rate]]
name = "requests"
counts = "requests"
per_minute = 3
"#;
    let ws = workspace(&auth.issuer, "", limits);
    let served = Served::start(ws.path(), &[]);
    let aud = served.url.as_str();
    let alice = json!({"aud": aud, "sub": "alice"});
    let report = probe(
        &served.url,
        &auth.issuer,
        // refused tokens spend nothing: they never reach the limit
        json!([{"aud": aud, "sub": "alice", "exp_in": -120}, alice, alice, alice, alice,
               {"aud": aud, "sub": "bob"}]),
    );
    let cases = report["cases"].as_array().unwrap();
    let statuses: Vec<u64> = cases
        .iter()
        .map(|c| c["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [401, 200, 200, 200, 429, 200], "{report}");
    // 3 a minute: the next of alice's in at most 20 s
    let retry: u64 = cases[4]["retry_after"].as_str().unwrap().parse().unwrap();
    assert!((1..=20).contains(&retry), "{report}");
    let body: Value = serde_json::from_str(cases[4]["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["error"]["code"], -32000, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("rate limit requests") && message.contains("send the request again in"),
        "{message}"
    );
    // the metadata is not counted
    assert_eq!(report["metadata"]["resource"], aud);
    served.stop();
}

#[test]
fn an_oauth_server_refuses_a_non_loopback_address() {
    let ws = workspace("https://as.example.com", "", "");
    let out = Command::new(TOOLGATE)
        .args(["serve", "--http", "0.0.0.0:0", "--workspace"])
        .arg(ws.path())
        .env_remove("TOOLGATE_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("without HTTPS in front"), "{err}");
}

/// Whether `needle` occurs in any file under `dir` (the store, its WAL, anything else).
fn found_under(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            found.extend(found_under(&path, needle));
        } else if std::fs::read(&path)
            .unwrap()
            .windows(needle.len())
            .any(|w| w == needle)
        {
            found.push(path);
        }
    }
    found
}

#[test]
#[cfg_attr(toolgate_no_python, ignore = "needs TOOLGATE_TEST_PYTHON")]
fn the_token_is_checked_on_every_request_of_a_session_and_kept_nowhere() {
    let Some(auth) = AuthServer::start(false) else {
        return;
    };
    let ws = workspace(&auth.issuer, "", ROLES);
    let served = Served::start(ws.path(), &[]);
    let mut cmd = python_script(script("oauth_client.py")).unwrap();
    cmd.args(["session", "--url", &served.url, "--issuer", &auth.issuer]);
    let out = run_ok(cmd, Duration::from_secs(120));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    // alice's session id with: no token, her expired token, her token without the scope,
    // bob's token (the session is not his: as if it did not exist), her token
    assert_eq!(
        report["statuses"],
        json!([401, 401, 403, 404, 200]),
        "{report}"
    );
    assert_eq!(
        report["tools"],
        json!([
            "edit_file",
            "glob",
            "http_fetch",
            "http_request",
            "list_dir",
            "read_file",
            "read_result",
            "run_shell",
            "search_code",
            "write_file"
        ])
    );
    // a flow's calls too, then the token is looked for where toolgate writes
    let alice = flow(
        &served.url,
        "alice",
        json!([["read_file", {"path": "notes.txt"}]]),
        "legacy",
    );
    assert_eq!(kinds(&alice), [("read_file".to_string(), false)], "{alice}");
    let log = served.log.clone();
    served.stop();
    // the token (or its signature alone) is in no file of the workspace (the store, its WAL,
    // the audit) and not in the log
    let token = report["token"].as_str().unwrap();
    let signature = token.rsplit('.').next().unwrap();
    assert!(signature.len() > 100, "{token}");
    for needle in [token, signature] {
        assert_eq!(
            found_under(ws.path(), needle.as_bytes()),
            Vec::<PathBuf>::new()
        );
        assert!(!log.lock().unwrap().contains(needle));
    }
    assert!(ws.path().join(".toolgate").is_dir());
}
