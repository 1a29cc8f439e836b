//! The `config_parser` fuzz target on the stable toolchain: every saved input in
//! `fuzz/regressions/config_parser/` (seeds, and each crash libFuzzer ever found, kept as a
//! regression test) replayed, then a bounded pseudo-random run of the same body. The checks
//! are documented in `fuzz/src/config_parser.rs`.

#[path = "../../../../fuzz/src/config_parser.rs"]
#[allow(dead_code)]
mod config_parser;

const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fuzz/regressions/config_parser"
);

#[test]
fn saved_inputs_replay_clean() {
    let mut replayed = 0;
    for entry in std::fs::read_dir(REGRESSIONS).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        config_parser::run(&data);
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

/// TOML fragments the random text is stitched from, so it reaches into the grammar.
const FRAGMENTS: [&str; 24] = [
    "[",
    "]",
    "[[rules]]\n",
    "decision = \"deny\"\n",
    "tool = ",
    "\"",
    "'''",
    "=",
    "\n",
    "{",
    "}",
    ",",
    "when = \"",
    "(",
    ")",
    "&&",
    "context.tool",
    "1",
    "-",
    "#",
    "\\",
    "é",
    "[store]\n",
    "path = \"x\"\n",
];

#[test]
fn a_bounded_random_run_finds_nothing() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..300 {
        // structured configurations built from raw bytes, and the bytes as text
        config_parser::run(&rng.bytes(96));
        // text stitched from TOML fragments
        let n = (rng.next() % 32) as usize;
        let text: String = (0..n)
            .map(|_| FRAGMENTS[(rng.next() as usize) % FRAGMENTS.len()])
            .collect();
        config_parser::check_text(&text);
    }
}
