//! Golden file: the normalised schemas and warnings of the BFCL definitions with the rarer
//! dialect features, beside the test in `golden/bfcl_quirks.json`.
//!
//! Regenerate after an intended change with
//! `TOOLGATE_BLESS=1 cargo test -p toolgate-core --test all import::golden` and review the diff.

use pretty_assertions::assert_eq;
use serde_json::{json, Map, Value};

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/import/golden/bfcl_quirks.json"
);

/// One definition (source and name: a source can hold several) for each quirk.
const SOURCES: [(&str, &str); 17] = [
    // tuple of floats, format
    (
        "BFCL_v4_multiple.json#multiple_5",
        "weather.get_by_coordinates_date",
    ),
    ("BFCL_v4_parallel.json#parallel_133", "calculate_distance"),
    // object-level optional list
    (
        "BFCL_v4_parallel_multiple.json#parallel_multiple_15",
        "restaurant.search",
    ),
    // optional: true beside required
    (
        "BFCL_v4_irrelevance.json#irrelevance_173",
        "music_analysis.find_common_chords",
    ),
    // optional: true with defaults
    ("BFCL_v4_parallel.json#parallel_197", "lawsuit_info"),
    // optional "true", default "5 years"
    (
        "BFCL_v4_irrelevance.json#irrelevance_75",
        "portfolio.returns",
    ),
    // any, HashMap
    (
        "BFCL_v4_simple_java.json#simple_java_1",
        "SQLCompletionAnalyzer.makeProposalsFromObject",
    ),
    // ArrayList of long
    (
        "BFCL_v4_simple_java.json#simple_java_22",
        "PmsProductServiceImpl.updateNewStatus",
    ),
    // Array of String
    (
        "BFCL_v4_simple_java.json#simple_java_35",
        "RedissonConnection.bitOp",
    ),
    // type "", String, nested dict
    (
        "BFCL_v4_simple_javascript.json#simple_javascript_23",
        "createAuthToken",
    ),
    // minItems and maxItems on the items
    (
        "BFCL_v4_irrelevance.json#irrelevance_128",
        "personality_assessment.calculate_score",
    ),
    // list default on enum items
    ("BFCL_v4_irrelevance.json#irrelevance_44", "gene_sequencer"),
    // dict default "None"
    (
        "BFCL_v4_irrelevance.json#irrelevance_89",
        "generate_contract",
    ),
    // boolean default "false"
    (
        "BFCL_v4_simple_python.json#simple_python_55",
        "biology.get_cell_info",
    ),
    // required without properties
    (
        "BFCL_v4_parallel.json#parallel_29",
        "waste_calculation.calculate",
    ),
    // response with items as a list
    (
        "multi_turn_func_doc/memory_kv.json#archival_memory_key_search",
        "archival_memory_key_search",
    ),
    // response property names like MA(5)
    (
        "multi_turn_func_doc/trading_bot.json#get_stock_info",
        "get_stock_info",
    ),
];

fn actual() -> Value {
    let mut out = Map::new();
    for (source, name) in SOURCES {
        let i = super::bfcl_imported()
            .iter()
            .find(|i| &*i.spec.name == name)
            .unwrap_or_else(|| panic!("{name} is not in functions.jsonl"));
        assert_eq!(i.source.as_deref(), Some(source));
        // sorted: warnings follow the schema's key order, which is the authored order when
        // serde_json's `preserve_order` is on (cedar-policy turns it on in a workspace build)
        let mut warnings: Vec<String> = i.warnings.iter().map(ToString::to_string).collect();
        warnings.sort();
        out.insert(
            name.to_string(),
            json!({
                "source": source,
                "inputSchema": i.spec.input_schema,
                "outputSchema": i.spec.output_schema,
                "warnings": warnings,
            }),
        );
    }
    Value::Object(out)
}

#[test]
fn quirky_definitions_match_the_golden_file() {
    let actual = actual();
    if std::env::var_os("TOOLGATE_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&actual).unwrap() + "\n";
        std::fs::write(GOLDEN, text).unwrap();
    }
    let golden = std::fs::read_to_string(GOLDEN)
        .unwrap_or_else(|e| panic!("{GOLDEN}: {e}; run with TOOLGATE_BLESS=1 to create it"));
    let golden: Value = serde_json::from_str(&golden).unwrap();
    assert_eq!(actual, golden);
}
