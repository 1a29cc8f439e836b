//! The body of the `config_parser` fuzz target: `toolgate_config::load_str` on arbitrary text
//! and on configurations built from the input, checked never to panic, never to overflow the
//! stack (a panic or abort either way), to be deterministic, to locate every problem inside
//! the text, and to give a policy that decides without panicking.
//!
//! This file depends only on `toolgate-config`, `toolgate-core`, `toolgate-tools`,
//! `serde_json`, `tempfile` and std, so the same code runs under libFuzzer
//! (`fuzz_targets/config_parser.rs`) and in the stable test suite of toolgate-config
//! (`crates/toolgate-config/tests/all/config_fuzz.rs`), which replays every saved input in
//! `fuzz/regressions/config_parser/` and a bounded pseudo-random run.
//!
//! What is checked for every input:
//!
//! 1. on the input as text (lossy UTF-8), loaded as `<T>/toolgate.toml` of a workspace `T`
//!    (a temporary directory kept for the life of the process, with a `.toolgate` directory):
//!    nothing panics; two loads give the same outcome; a refusal has at least one problem,
//!    each with a message, a line within the text (at most its line count plus one) and a
//!    column from 1;
//! 2. on a configuration built from the input's bytes out of fragments toolgate's schema
//!    knows (tables, rules with tools, resources, access and Cedar conditions stitched from
//!    operators and brackets, numbers and spans at their edges, store paths): the same
//!    checks;
//! 3. when a configuration loads: its policy decides calls of `read_file`, `write_file` and
//!    `run_shell` (evaluating every condition that applies, on the calling thread's stack)
//!    and paths, its session set-up, budgets, limits, shell settings, store path and grant
//!    expiries are read, all without a panic.

use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use toolgate_core::{Access, PolicyInput, Registry, Session, Tool, ToolSpec};

/// The workspace and the tools a configuration may name, made once.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    tools: Vec<Arc<dyn Tool>>,
    session: Session,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = std::fs::canonicalize(dir.path()).expect("its canonical path");
        std::fs::create_dir_all(root.join(".toolgate")).expect("the state directory");
        let mut tools = toolgate_tools::read_only_tools().expect("the read-only tools");
        tools.extend(toolgate_tools::write_tools().expect("the write tools"));
        let registry = Registry::builder()
            .tools(tools.iter().cloned())
            .build()
            .expect("a registry");
        let session = registry
            .session("fuzz")
            .attribute("team", json!("support"))
            .attribute("level", json!(3))
            .build()
            .expect("a session");
        World {
            _dir: dir,
            root,
            tools,
            session,
        }
    })
}

/// Runs every check on one input.
pub fn run(data: &[u8]) {
    check_text(&String::from_utf8_lossy(data));
    check_text(&build(data));
}

/// Checks 1 and 3 on one configuration text.
pub fn check_text(text: &str) {
    let w = world();
    let specs: Vec<&ToolSpec> = w.tools.iter().map(|t| t.spec()).collect();
    let names: Vec<&str> = specs.iter().map(|s| &*s.name).collect();
    let file = w.root.join("toolgate.toml");
    let first = toolgate_config::load_str(&w.root, &file, text, &names);
    let again = toolgate_config::load_str(&w.root, &file, text, &names);
    match (&first, &again) {
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "not deterministic: {text:?}");
            assert!(!a.is_empty(), "refused without a problem: {text:?}");
            let lines = text.lines().count() + 1;
            for p in a {
                assert!(!p.message.is_empty(), "a problem without a message: {p:?}");
                assert!(
                    p.line >= 1 && p.line <= lines && p.column >= 1,
                    "{p:?} is outside the text of {lines} lines: {text:?}"
                );
                assert_eq!(p.file, file);
            }
        }
        (Ok(_), Ok(_)) => {}
        _ => panic!("not deterministic: {text:?}"),
    }
    if let Ok(config) = first {
        exercise(&config, &w.root, &w.session, &specs);
    }
}

/// Check 3: everything a command reads of a loaded configuration.
fn exercise(config: &toolgate_config::Config, root: &Path, session: &Session, specs: &[&ToolSpec]) {
    let policy = config.policy();
    let arguments = json!({"path": "src/a.rs", "content": "x", "command": "git push"});
    for spec in specs {
        let input = PolicyInput {
            tool: spec,
            resources: &[],
            arguments: &arguments,
            session,
        };
        let _ = policy.decide(&input);
    }
    for (path, access) in [
        ("src/a.rs", Access::Read),
        (".env", Access::Read),
        ("secrets/key.pem", Access::Write),
        ("toolgate.toml", Access::Write),
    ] {
        let _ = policy.decide_path(Path::new(path), access, "default");
    }
    let _ = config.session(None, None, Vec::new());
    let _ = config.session(Some("support"), None, vec![("k".into(), json!(1))]);
    let _ = config.budgets();
    let _ = config.shell_config();
    let _ = config.store_path(root);
    let _ = config.grant_expiry();
    let _ = config.token_env();
    for p in config.profiles() {
        let _ = &p.name;
    }
}

/// Bytes of the input, read one at a time; zeros once it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }

    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[usize::from(self.next()) % from.len()]
    }

    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

const TOOLS: [&str; 9] = [
    "read_file",
    "write_file",
    "run_shell",
    "*",
    "*_file",
    "no_such_tool",
    "",
    "fs_[",
    "**",
];
const RESOURCES: [&str; 12] = [
    "path:.env",
    "path:secrets",
    "path:src/**",
    "path:/abs",
    "path:[",
    "host:*.example.com",
    "host:10.0.0.0/8",
    "command:git push",
    "command:",
    "path:",
    "url:x",
    "path:a\\u0000b",
];
const DECISIONS: [&str; 4] = ["allow", "ask", "deny", "maybe"];
const ACCESS: [&str; 4] = ["read", "write", "any", "none"];
/// Cedar pieces conditions are stitched from: operands, operators and brackets.
const CEDAR: [&str; 32] = [
    "context.attributes.team",
    "context.attributes has level",
    "context.tool",
    "context.role",
    "context.paths",
    "context.arguments.path",
    "principal",
    "resource",
    "\"support\"",
    "3",
    "true",
    "false",
    " && ",
    " || ",
    " == ",
    " != ",
    " < ",
    " + ",
    ".contains(",
    ".containsAny(",
    " like \"*x\"",
    " has ",
    "!",
    "(",
    ")",
    "[",
    "]",
    "{a: 1}",
    "if ",
    " then ",
    " else ",
    ",",
];
const SPANS: [&str; 10] = [
    "1s",
    "0s",
    "8h",
    "never",
    "100y",
    "101y",
    "1000000y",
    "36525d",
    "-1h",
    "99999999999999999999y",
];
const NUMBERS: [&str; 8] = [
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "18446744073709551616",
    "1e400",
    "3.5",
    "0x10",
];
const STORES: [&str; 7] = [
    ".toolgate/toolgate.db",
    "missing/dir/x.db",
    "",
    "/dev/null",
    "..",
    "a/",
    ".toolgate/x.db",
];

/// Check 2's configuration: tables and values picked by the input's bytes.
pub fn build(data: &[u8]) -> String {
    let mut b = Bytes(data);
    let mut out = String::new();
    let mut sections = 0;
    while !b.done() && sections < 24 {
        sections += 1;
        match b.next() % 8 {
            0..=2 => {
                out.push_str("[[rules]]\n");
                out.push_str(&format!("decision = \"{}\"\n", b.pick(&DECISIONS)));
                if b.next().is_multiple_of(2) {
                    out.push_str(&format!("tool = \"{}\"\n", b.pick(&TOOLS)));
                }
                if b.next().is_multiple_of(2) {
                    out.push_str(&format!("resource = \"{}\"\n", b.pick(&RESOURCES)));
                }
                if b.next().is_multiple_of(3) {
                    out.push_str(&format!("access = \"{}\"\n", b.pick(&ACCESS)));
                }
                if b.next().is_multiple_of(2) {
                    let key = if b.next().is_multiple_of(2) {
                        "when"
                    } else {
                        "unless"
                    };
                    out.push_str(&format!("{key} = '''{}'''\n", condition(&mut b)));
                }
            }
            3 => {
                out.push_str("[approvals]\n");
                for key in ["session_expires", "always_expires", "max_expires"] {
                    if b.next().is_multiple_of(2) {
                        out.push_str(&format!("{key} = \"{}\"\n", b.pick(&SPANS)));
                    }
                }
            }
            4 => {
                out.push_str("[budgets]\n");
                out.push_str(&format!("max_calls = {}\n", b.pick(&NUMBERS)));
                out.push_str("[limits]\n");
                out.push_str(&format!("timeout_ms = {}\n", b.pick(&NUMBERS)));
            }
            5 => {
                out.push_str(&format!("[store]\npath = \"{}\"\n", b.pick(&STORES)));
            }
            6 => {
                out.push_str("[roles.support]\nprofiles = [\"default\"]\n");
                out.push_str(&format!(
                    "attributes = {{ team = \"{}\" }}\n",
                    b.pick(&TOOLS)
                ));
                out.push_str(&format!(
                    "[profiles.p{}]\ntools = [\"{}\"]\n",
                    b.next(),
                    b.pick(&TOOLS)
                ));
            }
            _ => {
                // nesting in TOML itself
                let depth = usize::from(b.next());
                out.push_str(&format!("x = {}{}\n", "[".repeat(depth), "]".repeat(depth)));
            }
        }
    }
    out
}

/// A Cedar condition of up to 200 pieces (enough to pass every shape limit), or a long run
/// of one piece.
fn condition(b: &mut Bytes<'_>) -> String {
    let n = usize::from(b.next()) % 200;
    if b.next().is_multiple_of(8) {
        let piece = b.pick(&CEDAR);
        return piece.repeat(n);
    }
    (0..n).map(|_| b.pick(&CEDAR)).collect()
}
