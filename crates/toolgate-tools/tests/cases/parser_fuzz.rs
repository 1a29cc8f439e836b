//! The `command_parser` fuzz target on the stable toolchain: every saved input in
//! `fuzz/regressions/command_parser/` (seeds, and each crash libFuzzer ever found, kept as a
//! regression test) replayed, then a bounded pseudo-random run of the same body. The checks
//! are documented in `fuzz/src/command_parser.rs`.

#[path = "../../../../fuzz/src/command_parser.rs"]
#[allow(dead_code)]
mod command_parser;

const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fuzz/regressions/command_parser"
);

#[test]
fn saved_inputs_replay_clean() {
    let mut replayed = 0;
    for entry in std::fs::read_dir(REGRESSIONS).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        command_parser::run(&data);
        replayed += 1;
    }
    assert!(
        replayed >= 10,
        "the seed corpus is missing ({replayed} inputs)"
    );
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

    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = (self.next() as usize) % max;
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// Shell fragments the random text is stitched from, so it reaches deep into the grammar.
const FRAGMENTS: [&str; 40] = [
    "$(", ")", "`", "'", "\"", "\\", "&&", "||", ";", "|", "|&", "&", "\n", "<(", ">(", ">", ">>",
    "<", "2>&1", "<<EOF\n", "EOF\n", "{", "}", "((", "))", "[[", "]]", "${", "$((", "=",
    "bash -c ", "env ", "xargs ", "eval ", "curl ", "echo ", "git ", " ", "$'\\x41'", "#",
];

#[test]
fn a_bounded_random_run_finds_nothing() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..1500 {
        // structured lines built from raw bytes
        command_parser::run(&rng.bytes(64));
        // text stitched from shell fragments
        let n = (rng.next() % 24) as usize;
        let text: String = (0..n)
            .map(|_| FRAGMENTS[(rng.next() as usize) % FRAGMENTS.len()])
            .collect();
        command_parser::check_text(&text);
    }
}
