use super::*;
use crate::tool::Access;
use crate::workspace::Workspace;
use pretty_assertions::assert_eq;
use std::path::Path;

fn path(p: &str, mode: MatchMode) -> PathPattern {
    PathPattern::parse(p, mode).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn path_globs_follow_gitignore_conventions() {
    let table: &[(&str, &str, bool)] = &[
        (".env", ".env", true),
        (".env", "app/.env", true),
        (".env", ".env.example", false),
        ("/.env", "app/.env", false),
        ("/.env", ".env", true),
        ("secrets", "secrets/sub/key.pem", true),
        ("secrets/", "secrets/sub/key.pem", true),
        ("secrets", "x/secrets", true),
        ("secrets", "secretsx/a", false),
        (".git/config", ".git/config", true),
        (".git/config", "vendor/.git/config", false),
        ("**/.git/config", "vendor/.git/config", true),
        ("src/*.rs", "src/main.rs", true),
        ("src/*.rs", "src/bin/main.rs", false),
        ("src/**/*.rs", "src/bin/main.rs", true),
        ("*.pem", "a/b/c.pem", true),
        ("./docs", "docs/a.md", true),
        ("**", "anything/at/all", true),
        ("{a,b}/x", "b/x", true),
        ("[ab]/x", "c/x", false),
    ];
    for (pattern, p, expect) in table {
        assert_eq!(
            path(pattern, MatchMode::Grant).matches(Path::new(p)),
            *expect,
            "{pattern} / {p}"
        );
    }
}

#[test]
fn restricting_paths_match_every_spelling_granting_only_the_written_one() {
    for p in [
        ".ENV",
        "App/.Env",
        ".env.",
        ".env ",
        ".e\u{200c}nv",
        "\u{feff}.env",
    ] {
        assert!(
            path(".env", MatchMode::Restrict).matches(Path::new(p)),
            "{p}"
        );
    }
    assert!(path(".git", MatchMode::Restrict).matches(Path::new(".GIT/config")));
    assert!(path("Secrets", MatchMode::Restrict).matches(Path::new("secrets/a")));
    assert!(!path(".env", MatchMode::Grant).matches(Path::new(".ENV")));
    assert!(!path(".env", MatchMode::Restrict).matches(Path::new(".envrc")));
    assert!(!path(".env", MatchMode::Restrict).matches(Path::new("..")));
}

/// A [`PathPatternSet`] answers exactly as its patterns one by one, in both modes, over
/// spellings that fold, with empty slots and past 64 slots (more than one word of hits).
#[test]
fn a_path_pattern_set_answers_as_each_pattern_alone() {
    let texts = [
        ".env",
        "/.env",
        "secrets",
        ".git/config",
        "**/.git/config",
        "src/*.rs",
        "src/**/*.rs",
        "*.pem",
        "docs",
        "{a,b}/x",
        "[ab]/x",
        "**",
        "deploy/**",
        "Secrets/Sub",
    ];
    let mut patterns: Vec<Option<PathPattern>> = Vec::new();
    for round in 0..6 {
        for (k, t) in texts.iter().enumerate() {
            let mode = if (k + round) % 2 == 0 {
                MatchMode::Restrict
            } else {
                MatchMode::Grant
            };
            patterns.push(Some(path(t, mode)));
            if k % 5 == 0 {
                patterns.push(None);
            }
        }
    }
    assert!(patterns.len() > 64);
    let set = PathPatternSet::new(patterns.iter().map(Option::as_ref)).unwrap();
    assert_eq!(set.len(), patterns.len());
    let words = set.len().div_ceil(64);
    for p in [
        ".env",
        ".ENV",
        "app/.env.",
        ".e\u{200c}nv",
        ".envrc",
        "secrets/sub/key.pem",
        "SECRETS/sub",
        "secretsx/a",
        ".git/config",
        "vendor/.git/config",
        "src/main.rs",
        "src/bin/main.rs",
        "SRC/Main.rs",
        "a/b/c.pem",
        "docs/a.md",
        "b/x",
        "c/x",
        "deploy/prod/x.yaml",
        ".",
        "secrets/sub ",
    ] {
        let mut hits = vec![0u64; words];
        set.matches_into(Path::new(p), &mut hits);
        for (i, pat) in patterns.iter().enumerate() {
            let expect = pat.as_ref().is_some_and(|x| x.matches(Path::new(p)));
            let got = hits[i / 64] >> (i % 64) & 1 == 1;
            assert_eq!(got, expect, "slot {i} ({pat:?}) / {p:?}");
        }
    }
    // bits already set stay set; a buffer too short for the slots is not overrun
    let mut hits = vec![u64::MAX; words];
    set.matches_into(Path::new("nothing/matches/here.txt"), &mut hits);
    assert!(hits.iter().all(|w| *w == u64::MAX));
    let mut short = [0u64; 1];
    set.matches_into(Path::new("b/x"), &mut short);
    let empty = PathPatternSet::new([None, None]).unwrap();
    assert_eq!(empty.len(), 2);
    let mut hits = [0u64];
    empty.matches_into(Path::new(".env"), &mut hits);
    assert_eq!(hits, [0]);
}

#[test]
fn resolved_paths_are_matched_through_links_and_dot_dots() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("secrets/sub")).unwrap();
    std::fs::create_dir_all(dir.path().join("open")).unwrap();
    std::os::unix::fs::symlink("secrets/sub", dir.path().join("innocent")).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let deny = ResourcePattern::parse_with("path:secrets", MatchMode::Restrict).unwrap();
    for p in [
        "secrets/sub/key.pem",
        "innocent/key.pem",
        "open/../SECRETS/x",
    ] {
        let r = ResolvedResource::Path {
            path: ws.resolve(p).unwrap(),
            access: Access::Read,
        };
        assert!(deny.matches(&r), "{p}");
    }
    let r = ResolvedResource::Path {
        path: ws.resolve("open/a").unwrap(),
        access: Access::Write,
    };
    assert!(!deny.matches(&r));
    assert!(!deny.matches(&ResolvedResource::Url("http://secrets/".into())));
}

#[test]
fn hosts_match_names_subdomains_addresses_and_networks() {
    let table: &[(&str, &str, bool)] = &[
        ("example.com", "https://example.com/x", true),
        ("example.com", "https://EXAMPLE.com./x", true),
        ("example.com", "https://api.example.com/", false),
        ("example.com", "https://example.com.evil.net/", false),
        ("Example.COM", "http://example.com", true),
        ("*.example.com", "https://api.example.com/", true),
        ("*.example.com", "https://a.b.example.com/", true),
        ("*.example.com", "https://example.com/", false),
        ("*.example.com", "https://badexample.com/", false),
        ("*", "https://anything.net/", true),
        ("127.0.0.1", "http://127.0.0.1:8080/", true),
        ("127.0.0.1", "http://0x7f.1/", true),
        ("127.0.0.0/8", "http://127.9.9.9/", true),
        ("10.0.0.0/8", "http://11.0.0.1/", false),
        ("::1", "http://[::1]:80/", true),
        ("[::1]", "http://[::1]/", true),
        ("127.0.0.1", "http://[::ffff:127.0.0.1]/", true),
        ("localhost", "http://127.0.0.1/", false),
        // an address pattern covers every IPv6 form that carries the address, as the egress
        // policy reads them (a connection to any of them may reach it)
        ("127.0.0.1", "http://[::127.0.0.1]/", true),
        ("127.0.0.1", "http://[::ffff:0:7f00:1]/", true),
        ("127.0.0.1", "http://[64:ff9b::7f00:1]/", true),
        ("127.0.0.0/8", "http://[2002:7f00:1::]/", true),
        ("10.0.0.1", "http://[2001:0:7f00:2::f5ff:fffe]/", true),
        ("127.0.0.2", "http://[2001:0:7f00:2::f5ff:fffe]/", true),
        ("127.0.0.1", "http://[64:ff9b::808:808]/", false),
        ("10.0.0.0/8", "http://[2002:b00:1::]/", false),
        // and the names that are loopback by definition (RFC 6761), never looked up
        ("127.0.0.1", "http://localhost:8080/", true),
        ("127.0.0.0/8", "http://LOCALHOST./", true),
        ("::1", "http://api.localhost/", true),
        ("10.0.0.0/8", "http://localhost/", false),
        ("127.0.0.1", "http://localhost.example.com/", false),
        ("bücher.de", "https://xn--bcher-kva.de/", true),
        ("example.com", "not a url", false),
        ("example.com", "file:///etc/passwd", false),
    ];
    for (pattern, url, expect) in table {
        let p = HostPattern::parse(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        assert_eq!(p.matches_url(url), *expect, "{pattern} / {url}");
    }
}

#[test]
fn tool_patterns_are_globs_over_names() {
    let p = ToolPattern::parse("fs_*").unwrap();
    assert!(p.matches("fs_read") && !p.matches("read_fs") && !p.is_exact());
    assert!(ToolPattern::parse("*").unwrap().matches("anything"));
    let exact = ToolPattern::parse("read_file").unwrap();
    assert!(exact.is_exact() && exact.matches("read_file") && !exact.matches("read_files"));
    assert!(ToolPattern::parse("read_{file,result}")
        .unwrap()
        .matches("read_result"));
    assert!(ToolPattern::parse("*_file").unwrap().matches("write_file"));
    // `prefix*` and `*suffix` are matched as strings: the same answers as the glob
    let names = [
        "fs_",
        "fs_read",
        "fs",
        "xfs_read",
        "write_file",
        "file",
        "_file",
        "a*b",
        "ä_file",
        "",
    ];
    for text in [
        "fs_*", "*_file", "*file", "fs*", "f*_file", "*_fil?", "*", "a\\*", "*ä_file",
    ] {
        let fast = ToolPattern::parse(text).unwrap();
        let glob = globset::GlobBuilder::new(text)
            .literal_separator(false)
            .build()
            .unwrap()
            .compile_matcher();
        for name in names {
            assert_eq!(fast.matches(name), glob.is_match(name), "{text} / {name}");
        }
    }
}

#[test]
fn command_patterns_match_declared_commands() {
    let grant = ResourcePattern::parse("command:git push").unwrap();
    let restrict = ResourcePattern::parse_with("command:git push", MatchMode::Restrict).unwrap();
    let c = |s: &str| ResolvedResource::Command(s.into());
    assert!(grant.matches(&c("git push origin main")));
    assert!(!grant.matches(&c("git pushx")));
    assert!(!grant.matches(&c("/usr/bin/git push")));
    assert!(restrict.matches(&c("/usr/bin/git push")));
    assert!(!grant.matches(&ResolvedResource::Url("git push".into())));
}

#[test]
fn every_pattern_displays_as_written_and_parses_back() {
    for text in [
        "path:.env",
        "path:/.env",
        "path:src/**/*.rs",
        "path:secrets/",
        "host:*.example.com",
        "host:10.0.0.0/8",
        "host:[::1]",
        "command:git push",
        "command:curl*",
        "command:*",
    ] {
        let p = ResourcePattern::parse(text).unwrap();
        assert_eq!(p.to_string(), text);
        assert_eq!(ResourcePattern::parse(&p.to_string()).unwrap(), p);
    }
    let t = ToolPattern::parse("fs_*").unwrap();
    assert_eq!(t.to_string().parse::<ToolPattern>().unwrap(), t);
}

#[test]
fn bad_patterns_get_clear_errors() {
    let cases: &[(&str, &str)] = &[
        ("", "must start with path:, host:, command: or recipient:"),
        (
            ".env",
            "must start with path:, host:, command: or recipient:",
        ),
        (
            "file:.env",
            "must start with path:, host:, command: or recipient:",
        ),
        ("path:", "a path pattern must not be empty"),
        ("path:/", "a path pattern must not be empty"),
        ("path:src/[", "does not parse"),
        ("path:{a,b", "does not parse"),
        ("path:../x", "`.` or `..` component"),
        ("path:a//b", "empty component"),
        ("path:a/./b", "`.` or `..` component"),
        ("host:", "a host pattern must not be empty"),
        ("host:exa mple.com", "host pattern \"exa mple.com\""),
        (
            "host:a.*.com",
            "`*` may only stand as the whole first label",
        ),
        (
            "host:*example.com",
            "`*` may only stand as the whole first label",
        ),
        (
            "host:10.0.0.0/33",
            "a network is an address and a prefix length",
        ),
        ("command:", "must not be empty"),
        ("command:git * push", "`*` may only end the last word"),
        ("recipient:", "must not be empty"),
        ("recipient:company.com", "*@domain"),
    ];
    for (text, expect) in cases {
        let e = ResourcePattern::parse(text).expect_err(text).to_string();
        assert!(e.contains(expect), "{text}: {e}");
    }
    for (text, expect) in [
        ("", "must not be empty"),
        ("read file", "contains ' '"),
        ("a/b", "contains '/'"),
        ("fs_[", "does not parse"),
    ] {
        let e = ToolPattern::parse(text).expect_err(text).to_string();
        assert!(e.contains(expect), "{text:?}: {e}");
    }
}
