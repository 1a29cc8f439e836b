//! The `jsonrpc_frame` fuzz target on the stable toolchain: every saved input in
//! `fuzz/regressions/jsonrpc_frame/` (seeds, and each crash libFuzzer ever found, kept as a
//! regression test) replayed, then a bounded random run of the same body. Both transports
//! rely on `toolgate_mcp::jsonrpc::check` answering every message in form and letting no
//! request past unseen; the body's checks are documented in `fuzz/src/jsonrpc_frame.rs`.

#[path = "../../../../fuzz/src/jsonrpc_frame.rs"]
#[allow(dead_code)]
mod jsonrpc_frame;

use proptest::prelude::*;

const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fuzz/regressions/jsonrpc_frame"
);

#[test]
fn saved_inputs_replay_clean() {
    let mut replayed = 0;
    for entry in std::fs::read_dir(REGRESSIONS).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        jsonrpc_frame::run(&data);
        replayed += 1;
    }
    assert!(
        replayed >= 10,
        "the seed corpus is missing ({replayed} inputs)"
    );
}

#[test]
fn deep_and_long_inputs_are_checked_without_recursion() {
    for levels in [63, 64, 65, 127, 128, 200, 100_000] {
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"x":{}1{}}}}}"#,
            "[".repeat(levels),
            "]".repeat(levels)
        );
        jsonrpc_frame::check_bytes(text.as_bytes());
    }
    let big = format!(
        r#"{{"method":"tools/call","params":{{"name":"write_file","arguments":{{"content":"{}"}}}},"jsonrpc":"2.0","id":"big"}}"#,
        "x".repeat(1 << 20)
    );
    jsonrpc_frame::check_bytes(big.as_bytes());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 3000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_bytes_and_built_messages_hold(data in prop::collection::vec(any::<u8>(), 0..200)) {
        jsonrpc_frame::run(&data);
    }

    #[test]
    fn random_json_like_text_holds(text in r#"[\{\}\[\]":,0-9a-z\\ \-\.]{0,120}"#) {
        jsonrpc_frame::check_bytes(text.as_bytes());
        jsonrpc_frame::check_bytes(format!(r#"{{"jsonrpc":"2.0","id":{text}"#).as_bytes());
    }
}
