//! The JSON Schema of `toolgate.toml`, generated from [`crate::model::ConfigFile`] with
//! schemars. The repository keeps it at [`SCHEMA_PATH`]; a test fails when it is stale, and
//! `toolgate check --print-schema > schema/toolgate.schema.json` (or the test with
//! `TOOLGATE_REGENERATE_SCHEMA=1`) regenerates it.

/// Where the repository keeps the schema, relative to its root.
pub const SCHEMA_PATH: &str = "schema/toolgate.schema.json";

/// The schema as pretty-printed JSON, with a trailing newline.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(crate::model::ConfigFile);
    let mut s = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    s.push('\n');
    s
}
