//! Importing foreign tool definitions: every BFCL definition and recorded call of the data set
//! in `tests/data/bfcl`, each dialect's quirks, and bad input.

mod bad_input;
mod bfcl;
mod dialects;
mod golden;

use serde_json::Value;
use std::sync::OnceLock;
use toolgate_core::import::{import_definitions, Dialect, ImportOptions, Imported};

/// The BFCL data set (Apache-2.0, its license and provenance beside it), in the repository.
pub const BFCL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bfcl");

/// The text of a file of the BFCL data set.
pub fn bfcl_file(name: &str) -> String {
    let path = format!("{BFCL}/{name}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every definition of functions.jsonl, imported once.
pub fn bfcl_imported() -> &'static [Imported] {
    static IMPORTED: OnceLock<Vec<Imported>> = OnceLock::new();
    IMPORTED.get_or_init(|| {
        import_definitions(
            &bfcl_file("functions.jsonl"),
            Dialect::Auto,
            &ImportOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Every definition of functions.jsonl as written, by source.
pub fn bfcl_raw() -> &'static [(String, Value)] {
    static RAW: OnceLock<Vec<(String, Value)>> = OnceLock::new();
    RAW.get_or_init(|| {
        bfcl_file("functions.jsonl")
            .lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line).unwrap();
                (
                    v["source"].as_str().unwrap().to_string(),
                    v["function"].clone(),
                )
            })
            .collect()
    })
}

/// One recorded call of calls.jsonl.
pub struct Call {
    pub source: String,
    pub function_name: String,
    pub arguments: Value,
}

/// Every call of calls.jsonl.
pub fn bfcl_calls() -> Vec<Call> {
    bfcl_file("calls.jsonl")
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["expect"], "valid");
            Call {
                source: v["source"].as_str().unwrap().to_string(),
                function_name: v["function_name"].as_str().unwrap().to_string(),
                arguments: v["arguments"].clone(),
            }
        })
        .collect()
}
