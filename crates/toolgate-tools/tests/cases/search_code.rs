//! `search_code` through the pipeline and directly.

use super::support::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate_core::{ErrorKind, TypedTool};
use toolgate_tools::search::search_code::{
    CodeMatch, ContextLine, SearchCodeArgs, SearchCodeOutput,
};
use toolgate_tools::SearchCode;

fn m(path: &str, line: u64, column: u64, text: &str) -> CodeMatch {
    CodeMatch {
        path: path.into(),
        line,
        column,
        text: text.into(),
        before: vec![],
        after: vec![],
    }
}

fn cl(line: u64, text: &str) -> ContextLine {
    ContextLine {
        line,
        text: text.into(),
    }
}

fn tree(f: &Fixture) {
    f.write(
        "src/lib.rs",
        "pub mod parse;\n\nfn helper() {}\npub fn Parse_all() {}\n",
    );
    f.write(
        "src/parse.rs",
        "// parse things\npub fn parse(x: &str) -> u32 {\r\n    x.len() as u32\n}\n",
    );
    f.write("README.md", "Call parse() to parse.\n");
}

#[tokio::test]
async fn finds_matching_lines_sorted_by_path_and_line() {
    let f = Fixture::new();
    tree(&f);
    let r = f
        .call("search_code", json!({"pattern": r"fn\s+parse"}))
        .await;
    assert_eq!(
        out::<SearchCodeOutput>(&r),
        SearchCodeOutput {
            matches: vec![m("src/parse.rs", 2, 5, "pub fn parse(x: &str) -> u32 {")],
            total_matches: 1,
            truncated: false,
            files_searched: 3,
            files_with_matches: 1,
            binary_files_skipped: 0,
            warnings: vec![],
        }
    );
    let o: SearchCodeOutput = out(&f.call("search_code", json!({"pattern": "parse"})).await);
    assert_eq!(
        o.matches,
        vec![
            m("README.md", 1, 6, "Call parse() to parse."),
            m("src/lib.rs", 1, 9, "pub mod parse;"),
            m("src/parse.rs", 1, 4, "// parse things"),
            m("src/parse.rs", 2, 8, "pub fn parse(x: &str) -> u32 {"),
        ]
    );
    assert_eq!((o.total_matches, o.files_with_matches), (4, 3));
}

#[tokio::test]
async fn literal_case_path_and_glob_narrow_the_search() {
    let f = Fixture::new();
    tree(&f);
    f.write("notes/a.txt", "price is 3.50 (approx)\nprice is 3x50\n");
    let o: SearchCodeOutput = out(&f
        .call("search_code", json!({"pattern": "3.50 (", "literal": true}))
        .await);
    assert_eq!(
        o.matches,
        vec![m("notes/a.txt", 1, 10, "price is 3.50 (approx)")]
    );
    let o: SearchCodeOutput = out(&f.call("search_code", json!({"pattern": "3.50"})).await);
    assert_eq!(o.total_matches, 2, "a regex dot matches any character");
    let o: SearchCodeOutput = out(&f
        .call(
            "search_code",
            json!({"pattern": "fn parse_ALL", "case_sensitive": false}),
        )
        .await);
    assert_eq!(
        o.matches,
        vec![m("src/lib.rs", 4, 5, "pub fn Parse_all() {}")]
    );
    let o: SearchCodeOutput = out(&f
        .call("search_code", json!({"pattern": "parse", "glob": "*.md"}))
        .await);
    assert_eq!(o.files_searched, 1);
    assert_eq!(o.total_matches, 1);
    let o: SearchCodeOutput = out(&f
        .call("search_code", json!({"pattern": "parse", "glob": "!*.md"}))
        .await);
    assert_eq!(o.total_matches, 3);
    let o: SearchCodeOutput = out(&f
        .call("search_code", json!({"pattern": "parse", "path": "src"}))
        .await);
    assert_eq!(o.files_searched, 2);
    let o: SearchCodeOutput = out(&f
        .call(
            "search_code",
            json!({"pattern": "parse", "path": "src/parse.rs"}),
        )
        .await);
    assert_eq!(o.files_searched, 1);
    assert_eq!(o.total_matches, 2);
}

#[tokio::test]
async fn context_lines_are_attached_without_repeats() {
    let f = Fixture::new();
    let text: String = (1..=12)
        .map(|i| {
            if i == 5 || i == 7 {
                format!("hit {i}\n")
            } else {
                format!("l{i}\n")
            }
        })
        .collect();
    f.write("c.txt", &text);
    let o: SearchCodeOutput = out(&f
        .call("search_code", json!({"pattern": "hit", "context": 2}))
        .await);
    let mut first = m("c.txt", 5, 1, "hit 5");
    first.before = vec![cl(3, "l3"), cl(4, "l4")];
    first.after = vec![cl(6, "l6")];
    let mut second = m("c.txt", 7, 1, "hit 7");
    second.after = vec![cl(8, "l8"), cl(9, "l9")];
    assert_eq!(o.matches, vec![first, second]);
}

#[tokio::test]
async fn many_matches_keep_the_first_by_path_and_line_and_count_all() {
    let f = Fixture::new();
    for file in 0..40 {
        let text: String = (0..50)
            .map(|i| format!("needle {file} {i}\nhay\n"))
            .collect();
        f.write(&format!("d{}/f{file:02}.txt", file % 3), &text);
    }
    let mut want: Vec<(String, u64)> = (0..40)
        .flat_map(|file| (0..50).map(move |i| (format!("d{}/f{file:02}.txt", file % 3), 2 * i + 1)))
        .collect();
    want.sort();
    want.truncate(70);
    for _ in 0..3 {
        let o: SearchCodeOutput = out(&f
            .call(
                "search_code",
                json!({"pattern": "needle", "max_matches": 70}),
            )
            .await);
        assert_eq!(
            (o.total_matches, o.truncated, o.files_with_matches),
            (2000, true, 40)
        );
        let got: Vec<(String, u64)> = o.matches.iter().map(|m| (m.path.clone(), m.line)).collect();
        assert_eq!(got, want);
    }
}

#[tokio::test]
async fn binary_ignored_and_long_lines() {
    let f = Fixture::new();
    f.write("bin.dat", b"needle\x00needle\n");
    f.write(".gitignore", "gen/\n");
    f.write("gen/out.txt", "needle\n");
    f.write(".hidden/h.txt", "needle\n");
    f.write(
        "long.txt",
        format!("{}needle{}\n", "a".repeat(600), "b".repeat(10)),
    );
    let o: SearchCodeOutput = out(&f.call("search_code", json!({"pattern": "needle"})).await);
    // a long line is shown around its match
    let want_text = format!(
        "[... 500 bytes before ...] {}needle{}",
        "a".repeat(100),
        "b".repeat(10)
    );
    assert_eq!(o.matches, vec![m("long.txt", 1, 601, &want_text)]);
    assert_eq!(o.binary_files_skipped, 1);
    // a glob naming a hidden component searches hidden entries; a glob with `/` is relative
    // to `path`
    let o: SearchCodeOutput = out(&f
        .call(
            "search_code",
            json!({"pattern": "needle", "glob": ".hidden/*"}),
        )
        .await);
    assert_eq!(o.matches, vec![m(".hidden/h.txt", 1, 1, "needle")]);
    f.write("sub/dir/x.txt", "needle\n");
    let o: SearchCodeOutput = out(&f
        .call(
            "search_code",
            json!({"pattern": "needle", "path": "sub", "glob": "dir/*.txt"}),
        )
        .await);
    assert_eq!(o.matches, vec![m("sub/dir/x.txt", 1, 1, "needle")]);
}

#[tokio::test]
async fn invalid_patterns_and_globs_point_at_their_argument() {
    let f = Fixture::new();
    tree(&f);
    let r = f.call("search_code", json!({"pattern": "fn ("})).await;
    assert_bad_args(&r, &["/pattern"]);
    assert_eq!(
        r.error.as_ref().unwrap().reason.as_deref(),
        Some("invalid_regex")
    );
    assert!(r.error.as_ref().unwrap().is_recoverable());
    // the same text is fine as a literal
    let o: SearchCodeOutput = out(&f
        .call("search_code", json!({"pattern": "fn (", "literal": true}))
        .await);
    assert_eq!(o.total_matches, 0);
    let r = f.call("search_code", json!({"pattern": "a\\nb"})).await;
    assert_bad_args(&r, &["/pattern"]);
    let r = f
        .call("search_code", json!({"pattern": "x", "glob": "src/[a"}))
        .await;
    assert_bad_args(&r, &["/glob"]);
    assert_not_found(
        &f.call("search_code", json!({"pattern": "x", "path": "nope"}))
            .await,
    );
    for (args, pointers) in [
        (json!({}), vec!["/pattern"]),
        (json!({"pattern": ""}), vec!["/pattern"]),
        (json!({"pattern": "x", "context": 11}), vec!["/context"]),
        (json!({"pattern": "x", "context": -1}), vec!["/context"]),
        (
            json!({"pattern": "x", "max_matches": 0}),
            vec!["/max_matches"],
        ),
        (
            json!({"pattern": "x", "max_matches": 5001}),
            vec!["/max_matches"],
        ),
        (json!({"pattern": "x", "literal": "yes"}), vec!["/literal"]),
        (
            json!({"pattern": "x", "case_sensitive": 0}),
            vec!["/case_sensitive"],
        ),
        (json!({"pattern": "x", "glob": ""}), vec!["/glob"]),
        (json!({"pattern": "x", "regex": true}), vec!["/regex"]),
    ] {
        assert_bad_args(&f.call("search_code", args).await, &pointers);
    }
}

fn args(pattern: &str) -> SearchCodeArgs {
    SearchCodeArgs {
        pattern: pattern.into(),
        path: None,
        glob: None,
        literal: false,
        case_sensitive: true,
        context: 0,
        max_matches: 200,
    }
}

#[tokio::test]
async fn direct_calls_are_confined_and_cancellable() {
    let f = Fixture::new();
    tree(&f);
    f.link("../outside", "out");
    let o = SearchCode.call(args("helper"), f.ctx()).await.unwrap();
    assert_eq!(o.matches, vec![m("src/lib.rs", 3, 4, "fn helper() {}")]);
    for path in ["out", "..", "../outside/secret.txt", "/etc/passwd"] {
        let e = SearchCode
            .call(
                SearchCodeArgs {
                    path: Some(path.into()),
                    ..args("CANARY")
                },
                f.ctx(),
            )
            .await
            .unwrap_err();
        assert_eq!(
            e.reason.as_deref(),
            Some("path_outside_workspace"),
            "{path}: {e}"
        );
    }
    // numbers out of the schema's range, given directly, are clamped
    let o = SearchCode
        .call(
            SearchCodeArgs {
                max_matches: 0,
                context: 99,
                ..args("pub")
            },
            f.ctx(),
        )
        .await
        .unwrap();
    assert_eq!((o.matches.len(), o.total_matches), (1, 3));
    // line 4 matches too, so the after-context stops before it
    assert_eq!(o.matches[0].after, vec![cl(2, ""), cl(3, "fn helper() {}")]);
    let token = tokio_util::sync::CancellationToken::new();
    token.cancel();
    let ctx = toolgate_core::ToolContext::builder()
        .workspace(f.session.workspace().unwrap().read_only())
        .cancellation(token)
        .build();
    let e = SearchCode.call(args("parse"), ctx).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Cancelled);
}
