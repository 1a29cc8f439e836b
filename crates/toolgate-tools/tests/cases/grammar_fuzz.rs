//! The `command_grammar` fuzz target on the stable toolchain: every saved input in
//! `fuzz/regressions/command_grammar/` (a seed per construct, and each finding of libFuzzer,
//! kept as a regression test) replayed, a bounded pseudo-random run of the same body, and a
//! proptest over it (which shrinks a failing input). The property is documented in
//! `fuzz/src/command_grammar.rs`: every program a built line can run is decided by a rule or
//! makes the call ask.

#[path = "../../../../fuzz/src/command_grammar.rs"]
#[allow(dead_code)]
mod command_grammar;

use proptest::prelude::*;

const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fuzz/regressions/command_grammar"
);

#[test]
fn saved_inputs_replay_clean() {
    let mut replayed = 0;
    for entry in std::fs::read_dir(REGRESSIONS).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        command_grammar::run(&data);
        replayed += 1;
    }
    assert!(
        replayed >= 26,
        "the seed corpus is missing ({replayed} inputs)"
    );
}

/// The builder reaches every construct, so the property is about all of them.
#[test]
fn the_builder_reaches_every_construct() {
    for c in 0u8..26 {
        let (line, placed) = command_grammar::build(&[c, 1, 2, 3, 4]);
        assert!(!line.is_empty() && !placed.is_empty(), "{c}: {line:?}");
    }
}

/// xorshift64*: a fixed, dependency-free sequence, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn a_bounded_random_run_finds_nothing() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..1500 {
        let len = 4 + (rng.next() % 40) as usize;
        let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        command_grammar::run(&data);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_program_a_line_runs_is_decided_or_asks(data in proptest::collection::vec(any::<u8>(), 4..48)) {
        command_grammar::run(&data);
    }
}
