use super::*;
use pretty_assertions::assert_eq;

fn new(scope: GrantScope, session: Option<&str>) -> NewGrant {
    NewGrant {
        tool_pattern: "write_file".into(),
        resource_patterns: Vec::new(),
        scope,
        session: session.map(Into::into),
        created_us: 10,
        expires_us: None,
        granted_by: None,
        note: None,
        principal: None,
    }
}

#[test]
fn scopes_parse_and_print() {
    for s in [GrantScope::Once, GrantScope::Session, GrantScope::Always] {
        assert_eq!(s.as_str().parse::<GrantScope>().unwrap(), s);
        assert_eq!(s.to_string(), s.as_str());
    }
    for bad in ["", "Once", "forever", "session ", "\u{1b}[2J"] {
        let e = bad.parse::<GrantScope>().unwrap_err().to_string();
        assert!(e.contains("not once, session or always"), "{bad:?}: {e}");
    }
}

#[test]
fn bad_grants_are_refused_with_a_reason() {
    let cases: Vec<(NewGrant, &str)> = vec![
        (
            NewGrant {
                tool_pattern: " ".into(),
                ..new(GrantScope::Always, None)
            },
            "tool_pattern is empty",
        ),
        (
            NewGrant {
                tool_pattern: "x".repeat(MAX_GRANT_TEXT + 1),
                ..new(GrantScope::Always, None)
            },
            "more than",
        ),
        (
            NewGrant {
                note: Some("a\0b".into()),
                principal: None,
                ..new(GrantScope::Always, None)
            },
            "note contains NUL",
        ),
        (new(GrantScope::Session, None), "needs a session"),
        (new(GrantScope::Once, Some("")), "session is empty"),
        (new(GrantScope::Always, Some("s")), "every session"),
        (
            NewGrant {
                expires_us: Some(10),
                ..new(GrantScope::Always, None)
            },
            "not after",
        ),
    ];
    let store = MemoryGrantStore::new();
    for (g, says) in cases {
        let e = store.insert(&g).unwrap_err().to_string();
        assert!(e.contains(says), "{e} / {says}");
    }
    assert!(store.list(&GrantFilter::default()).unwrap().is_empty());
}

#[test]
fn requests_become_grants_or_clear_errors() {
    let req = GrantRequest::new(GrantScope::Session);
    let g = req
        .to_new_grant("edit_file", "s1", None, 100, Some("terminal"))
        .unwrap();
    assert_eq!(
        (g.tool_pattern.as_str(), g.session.as_deref(), g.expires_us),
        ("edit_file", Some("s1"), None)
    );
    let always = GrantRequest::new(GrantScope::Always)
        .to_new_grant("edit_file", "s1", None, 100, None)
        .unwrap();
    assert_eq!(always.session, None);
    let once = GrantRequest::new(GrantScope::Once).to_new_grant("t", "s", None, 1, None);
    assert!(once.unwrap_err().to_string().contains("not stored"));
    let zero = GrantRequest {
        expires_in_secs: Some(0),
        ..GrantRequest::new(GrantScope::Always)
    };
    assert!(zero.to_new_grant("t", "s", None, 1, None).is_err());
    // an expiry past 100 years is refused, not saturated into a time no view can show
    for secs in [u64::MAX, MAX_EXPIRY.as_secs() + 1] {
        let far = GrantRequest {
            expires_in_secs: Some(secs),
            ..GrantRequest::new(GrantScope::Always)
        };
        let e = far
            .to_new_grant("t", "s", None, 1, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("longer than the longest"), "{e}");
    }
    let longest = GrantRequest {
        expires_in_secs: Some(MAX_EXPIRY.as_secs()),
        ..GrantRequest::new(GrantScope::Always)
    };
    assert_eq!(
        longest
            .to_new_grant("t", "s", None, 1, None)
            .unwrap()
            .expires_us,
        Some(1 + MAX_EXPIRY.as_secs() * 1_000_000)
    );
}

#[test]
fn stored_times_stay_within_what_a_store_holds() {
    let ok = new(GrantScope::Always, None);
    for (created_us, expires_us, says) in [
        (u64::MAX, None, "past the latest time"),
        (i64::MAX as u64 + 1, None, "past the latest time"),
        (1, Some(u64::MAX), "more than 36525 days"),
        (5, Some(5), "not after"),
    ] {
        let g = NewGrant {
            created_us,
            expires_us,
            ..ok.clone()
        };
        let e = g.check().unwrap_err().to_string();
        assert!(e.contains(says), "{created_us} {expires_us:?}: {e}");
    }
}

#[test]
fn the_memory_store_filters_by_session_and_time() {
    let s = MemoryGrantStore::new();
    let a = s.insert(&new(GrantScope::Session, Some("s1"))).unwrap();
    let b = s.insert(&new(GrantScope::Always, None)).unwrap();
    let c = s
        .insert(&NewGrant {
            expires_us: Some(50),
            ..new(GrantScope::Once, Some("s2"))
        })
        .unwrap();
    let ids = |v: Vec<Grant>| v.into_iter().map(|g| g.id).collect::<Vec<_>>();
    assert_eq!(ids(s.active("s1", 20).unwrap()), [a.id, b.id]);
    assert_eq!(ids(s.active("s2", 20).unwrap()), [b.id, c.id]);
    assert_eq!(ids(s.active("s2", 50).unwrap()), [b.id], "expired at 50");
    assert!(!s.spend_once(c.id, 60).unwrap(), "an expired once grant");
    assert!(!s.spend_once(a.id, 20).unwrap(), "not a once grant");
    assert!(s.revoke(a.id, 30).unwrap());
    assert!(!s.revoke(a.id, 31).unwrap());
    assert!(!s.revoke(99, 31).unwrap());
    assert_eq!(ids(s.active("s1", 40).unwrap()), [b.id]);
    assert_eq!(
        ids(s.list(&GrantFilter::default()).unwrap()),
        [a.id, b.id, c.id]
    );
}

fn path(ws: &crate::Workspace, p: &str) -> ResolvedResource {
    ResolvedResource::Path {
        path: ws.resolve(p).unwrap(),
        access: crate::Access::Write,
    }
}

#[test]
fn patterns_cover_what_they_say_and_no_more() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
    let ws = crate::Workspace::open(dir.path()).unwrap();
    let g = |tool: &str, resource: Option<&str>| Grant {
        id: 1,
        tool_pattern: tool.into(),
        resource_patterns: resource.into_iter().map(Into::into).collect(),
        scope: GrantScope::Always,
        session: None,
        created_us: 0,
        expires_us: None,
        revoked_us: None,
        used_us: None,
        granted_by: None,
        note: None,
        principal: None,
    };
    let src = [path(&ws, "src/deep/a.rs")];
    let mixed = [path(&ws, "src/a.rs"), path(&ws, "README.md")];
    // tool globs
    assert!(g("write_file", None).covers("write_file", &src));
    assert!(g("*_file", None).covers("edit_file", &src));
    assert!(!g("write_file", None).covers("edit_file", &src));
    // a resource pattern covers a call whose every resource matches, and at least one
    let under_src = g("write_file", Some("path:src/**"));
    assert!(under_src.covers("write_file", &src));
    assert!(
        !under_src.covers("write_file", &mixed),
        "README.md is outside"
    );
    assert!(!under_src.covers("write_file", &[]), "no resource to match");
    assert!(!under_src.covers(
        "write_file",
        &[ResolvedResource::Url("https://src/".into())]
    ));
    // grants match as written: no case folding
    assert!(!g("write_file", Some("path:SRC/**")).covers("write_file", &src));
    let cmd = g("run_shell", Some("command:cargo test"));
    assert!(cmd.covers(
        "run_shell",
        &[ResolvedResource::Command("cargo test --offline".into())]
    ));
    assert!(!cmd.covers(
        "run_shell",
        &[ResolvedResource::Command("cargo testx".into())]
    ));
    assert!(!cmd.covers(
        "run_shell",
        &[ResolvedResource::Command("cargo test; rm -rf /".into())]
    ));
    // a command the call may run needs no grant, and none covers it alone
    assert!(cmd.covers(
        "run_shell",
        &[
            ResolvedResource::Command("cargo test --note 'a b'".into()),
            ResolvedResource::PossibleCommand("a b".into())
        ]
    ));
    assert!(!cmd.covers(
        "run_shell",
        &[ResolvedResource::PossibleCommand("cargo test".into())]
    ));
    let host = g("http_fetch", Some("host:*.example.com"));
    assert!(host.covers(
        "http_fetch",
        &[ResolvedResource::Url("https://api.example.com/x".into())]
    ));
    assert!(!host.covers(
        "http_fetch",
        &[ResolvedResource::Url("https://example.org/".into())]
    ));
    // a stored pattern that does not parse covers nothing
    assert!(!g("write file", None).covers("write file", &src));
    assert!(!g("write_file", Some("src/**")).covers("write_file", &src));
}

#[test]
fn bad_patterns_are_refused_when_granted() {
    for (tool, resource, says) in [
        ("write file", None, "tool pattern"),
        ("", None, "empty"),
        ("write_file", Some("src/**"), "must start with path:"),
        ("write_file", Some("path:../x"), "canonical"),
        ("write_file", Some("host:"), "empty"),
        ("write_file", Some("path:[x"), "does not parse"),
    ] {
        let req = GrantRequest {
            tool: Some(tool.into()),
            resources: resource.into_iter().map(Into::into).collect(),
            ..GrantRequest::new(GrantScope::Always)
        };
        let e = req
            .to_new_grant("write_file", "s", None, 1, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{tool:?} {resource:?}: {e}");
    }
}

/// The pattern cache matches exactly as [`Grant::covers`] does, compiles a grant once, and
/// never matches a grant with another grant's patterns under a reused id.
#[test]
fn the_pattern_cache_matches_as_covers_does() {
    use crate::grant::GrantPatternCache;
    let cache = GrantPatternCache::new();
    let grant = |id: i64, tool: &str, resource: Option<&str>| Grant {
        id,
        tool_pattern: tool.into(),
        resource_patterns: resource.into_iter().map(Into::into).collect(),
        scope: GrantScope::Always,
        session: None,
        created_us: 1,
        expires_us: None,
        revoked_us: None,
        used_us: None,
        granted_by: None,
        note: None,
        principal: None,
    };
    let none: &[ResolvedResource] = &[];
    let grants = [
        grant(1, "write_file", None),
        grant(2, "*_file", None),
        grant(3, "fs_[", None),
        grant(4, "write_file", Some("nope:x")),
        grant(5, "delete_all", Some("path:src/**")),
    ];
    for _ in 0..2 {
        for g in &grants {
            for tool in ["write_file", "read_file", "delete_all"] {
                assert_eq!(
                    cache.covers(g, tool, none),
                    g.covers(tool, none),
                    "{g:?} {tool}"
                );
            }
        }
    }
    assert_eq!(cache.len(), grants.len());
    // an id whose patterns changed (a store rebuilt under the cache) is compiled afresh
    assert!(cache.covers(&grant(1, "write_file", None), "write_file", none));
    assert!(!cache.covers(&grant(1, "read_file", None), "write_file", none));
    assert!(cache.covers(&grant(1, "read_file", None), "read_file", none));
    assert_eq!(cache.len(), grants.len());
}
