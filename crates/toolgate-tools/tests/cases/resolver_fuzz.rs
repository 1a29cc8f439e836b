//! The `path_resolver` fuzz target on the stable toolchain: every saved input in
//! `fuzz/regressions/path_resolver/` (seeds, and each crash libFuzzer ever found, kept as a
//! regression test) replayed, then a bounded random run of the same body. The write tools
//! rely on `Workspace::resolve` never letting a path out; the body's checks are documented in
//! `fuzz/src/path_resolver.rs`.

#[path = "../../../../fuzz/src/path_resolver.rs"]
#[allow(dead_code)]
mod path_resolver;

use proptest::prelude::*;

const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fuzz/regressions/path_resolver"
);

fn tree() -> &'static path_resolver::Tree {
    static TREE: std::sync::OnceLock<path_resolver::Tree> = std::sync::OnceLock::new();
    TREE.get_or_init(path_resolver::Tree::new)
}

#[test]
fn saved_inputs_replay_clean() {
    let mut replayed = 0;
    for entry in std::fs::read_dir(REGRESSIONS).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let input = tree().path_from(&data);
        tree().check(&input);
        replayed += 1;
    }
    assert!(
        replayed >= 10,
        "the seed corpus is missing ({replayed} inputs)"
    );
}

#[test]
fn hand_written_escapes_are_caught() {
    for input in [
        "a/link_out/secret.txt",
        "abs_out/secret.txt",
        "up2/outside/secret.txt",
        "a/link_up/a/link_up/../outside",
        "deep/../../../outside",
        "self/self/self/..",
        "loop1/x",
        "dangling_out",
        "dangling_in/../../../outside",
        "a/b/c.txt/../../../..",
        "../ws-evil/x",
        "",
        "/",
        "//ws",
        "a//b/./c.txt",
    ] {
        tree().check(input);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_inputs_never_escape(data in prop::collection::vec(any::<u8>(), 0..24)) {
        let input = tree().path_from(&data);
        tree().check(&input);
    }
}
