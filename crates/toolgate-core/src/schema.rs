//! JSON Schema compilation (once: at registration, or at first use for a schema known to
//! compile) and validation with JSON pointers.
//!
//! Schemas are JSON Schema 2020-12 unless they name another draft in `$schema` (MCP
//! specification 2025-11-25, "Tools": the default dialect is 2020-12). Remote `$ref`s are never
//! fetched.
//!
//! `pattern` and `patternProperties` run on the linear-time `regex` engine, never on a
//! backtracking one: a schema comes from an upstream or an import as often as from toolgate, and
//! a lookahead with a backreference (`(?=(a+))\1*b`) took 113 s (debug build) to check one
//! 20,000-character argument with the backtracking engine, on the caller's thread. A `pattern`
//! that only a backtracking engine runs (lookaround, backreferences: valid ECMA-262) is left
//! unchecked, with a warning naming the tool and where; the tool checks its own
//! arguments anyway. A pattern that is no regular expression at all still fails the schema.

use crate::error::{ArgumentFault, RegistrationError};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::types::JsonType;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;
use std::sync::OnceLock;

/// A schema compiled once; validating against it allocates nothing when the value is valid.
///
/// Made by [`CompiledSchema::compile`] (checked and compiled at once: a fault is a
/// [`RegistrationError`]) or [`CompiledSchema::deferred`] (compiled at its first use: for
/// schemas known to compile, such as those derived from Rust types, so a process that
/// registers many tools and calls few does not compile them all before it can serve).
pub struct CompiledSchema {
    /// The validator, or why the schema did not compile (only a deferred schema can get
    /// here with an error: `compile` returns it instead).
    validator: OnceLock<Result<Validator, String>>,
    /// The schema as given, to name the arguments it does allow when a call sends one it
    /// does not.
    schema: Value,
    /// `inputSchema` or `outputSchema`, for the message of a deferred schema that does not
    /// compile.
    which: &'static str,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema").finish_non_exhaustive()
    }
}

impl CompiledSchema {
    /// Compiles `schema` for tool `tool`; `which` is `inputSchema` or `outputSchema`. The root
    /// must be an object schema with `"type": "object"`, as MCP requires of both.
    ///
    /// # Errors
    /// [`RegistrationError::InvalidSchema`] with the JSON pointer of the fault inside the
    /// schema (for example `/properties/path/type` for an unknown type name).
    pub fn compile(
        tool: &str,
        which: &'static str,
        schema: &Value,
    ) -> Result<Self, RegistrationError> {
        check_root(tool, which, schema)?;
        let validator = build(tool, which, schema)
            .map_err(|(pointer, message)| invalid(tool, which, &pointer, message))?;
        Ok(CompiledSchema {
            validator: OnceLock::from(Ok(validator)),
            schema: schema.clone(),
            which,
        })
    }

    /// `schema` with its root checked now (as [`CompiledSchema::compile`] does) and the rest
    /// compiled at its first use (by any thread; the others wait for it): for a schema known
    /// to compile, such as one derived from Rust types whose tests compile it with
    /// [`CompiledSchema::compile`]. Should it not compile after all, every value is invalid
    /// against it and [`CompiledSchema::faults`] says so (a fault of the tool, never a
    /// panic).
    ///
    /// # Errors
    /// [`RegistrationError::InvalidSchema`] when the root is not an object schema with
    /// `"type": "object"`.
    pub fn deferred(
        tool: &str,
        which: &'static str,
        schema: Value,
    ) -> Result<Self, RegistrationError> {
        check_root(tool, which, &schema)?;
        Ok(CompiledSchema {
            validator: OnceLock::new(),
            schema,
            which,
        })
    }

    /// The validator, compiled now when deferred and not yet compiled.
    #[inline]
    fn validator(&self) -> Result<&Validator, &str> {
        self.validator
            .get_or_init(|| {
                build("(deferred)", self.which, &self.schema)
                    .map_err(|(pointer, message)| format!("at {pointer}: {message}"))
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Whether `value` satisfies the schema. Allocates nothing (once compiled).
    #[inline]
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator().is_ok_and(|v| v.is_valid(value))
    }

    /// Every fault of `value` against the schema, each with the JSON pointer of the offending
    /// value and a message saying what to send instead. Empty when valid. An unexpected
    /// property is reported at its own pointer (`/max_depth`), naming the closest property
    /// the schema allows there (`did you mean "max_depth_x"?`) and the ones it allows; a
    /// missing required one at the pointer it would have; a value of the wrong type says what
    /// was expected and what came (`expected an integer, got the string "3"`).
    pub fn faults(&self, value: &Value) -> Vec<ArgumentFault> {
        let validator = match self.validator() {
            Ok(v) => v,
            Err(why) => {
                return vec![ArgumentFault {
                    pointer: String::new(),
                    message: format!(
                        "the tool's {} does not compile ({why}): no value can be checked \
                         against it; this is a fault of the tool, not of the call",
                        self.which
                    ),
                }];
            }
        };
        let mut out = Vec::new();
        for error in validator.iter_errors(value) {
            self.push_faults(&error, &mut out);
        }
        out
    }

    fn push_faults(&self, error: &ValidationError<'_>, out: &mut Vec<ArgumentFault>) {
        let base = error.instance_path().as_str();
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let known = self.properties_beside(error.schema_path().as_str());
                for name in unexpected {
                    out.push(ArgumentFault {
                        pointer: format!("{base}/{}", escape_pointer(name)),
                        message: unknown_argument(name, &known),
                    });
                }
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                out.push(ArgumentFault {
                    pointer: format!("{base}/{}", escape_pointer(name)),
                    message: format!("missing required argument {name:?}"),
                });
            }
            ValidationErrorKind::Type { kind } => out.push(ArgumentFault {
                pointer: base.to_string(),
                message: wrong_type(kind, error.instance()),
            }),
            _ => out.push(ArgumentFault {
                pointer: base.to_string(),
                message: error.to_string(),
            }),
        }
    }

    /// The property names of the object schema whose `additionalProperties` (or
    /// `unevaluatedProperties`) keyword is at `keyword_path`; empty when it cannot be found
    /// (behind a `$ref`, for example).
    fn properties_beside(&self, keyword_path: &str) -> Vec<&str> {
        let parent = keyword_path.rsplit_once('/').map_or("", |(p, _)| p);
        self.schema
            .pointer(parent)
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// Validates, returning the faults when invalid.
    ///
    /// # Errors
    /// The list of faults (never empty).
    pub fn validate(&self, value: &Value) -> Result<(), Vec<ArgumentFault>> {
        if self.is_valid(value) {
            Ok(())
        } else {
            Err(self.faults(value))
        }
    }
}

/// The fault of `tool`'s `which` schema at `pointer`.
/// The most `pattern`s of one schema left unchecked for needing a backtracking engine; past
/// it the schema fails to compile.
const MAX_UNCHECKED_PATTERNS: usize = 32;

/// `schema` compiled with its patterns on the `regex` engine (see the module's documentation);
/// each `pattern` only a backtracking engine can run is taken out of the copy compiled, with a
/// warning. The error: the JSON pointer of the fault inside the schema and what is wrong.
fn build(tool: &str, which: &str, schema: &Value) -> Result<Validator, (String, String)> {
    let linear = || jsonschema::options().with_pattern_options(jsonschema::PatternOptions::regex());
    let mut stripped: Option<Value> = None;
    let mut unchecked = 0;
    loop {
        let current = stripped.as_ref().unwrap_or(schema);
        let e = match linear().build(current) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let pointer = e.instance_path().as_str().to_string();
        let fault = (pointer.clone(), e.to_string());
        let Some(parent) = pointer.strip_suffix("/pattern") else {
            return Err(fault);
        };
        let Some(pattern) = current
            .pointer(&pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Err(fault);
        };
        let backtracking = jsonschema::options()
            .with_pattern_options(jsonschema::PatternOptions::fancy_regex())
            .build(&serde_json::json!({ "pattern": pattern }))
            .is_ok();
        if !backtracking || unchecked == MAX_UNCHECKED_PATTERNS {
            return Err(fault);
        }
        unchecked += 1;
        tracing::warn!(
            tool,
            which,
            pointer,
            pattern = %pattern,
            "a pattern that needs a backtracking regex engine (lookaround, a backreference) is \
             not checked by toolgate: its cost on a long argument has no bound; the tool checks \
             its arguments itself"
        );
        let copy = stripped.get_or_insert_with(|| schema.clone());
        match copy.pointer_mut(parent).and_then(Value::as_object_mut) {
            Some(node) => {
                node.remove("pattern");
            }
            None => return Err(fault),
        }
    }
}

fn invalid(tool: &str, which: &'static str, pointer: &str, message: String) -> RegistrationError {
    RegistrationError::InvalidSchema {
        tool: tool.to_string(),
        which,
        pointer: pointer.to_string(),
        message,
    }
}

/// The root of a tool schema must be an object schema with `"type": "object"`, as MCP
/// requires of both `inputSchema` and `outputSchema`.
fn check_root(tool: &str, which: &'static str, schema: &Value) -> Result<(), RegistrationError> {
    let Some(root) = schema.as_object() else {
        return Err(invalid(
            tool,
            which,
            "",
            "the schema must be a JSON object".into(),
        ));
    };
    match root.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        _ => Err(invalid(
            tool,
            which,
            "/type",
            "the root of a tool schema must have \"type\": \"object\"".into(),
        )),
    }
}

/// Most allowed names listed after an unknown argument.
const MAX_LISTED: usize = 20;

/// The message for an argument the schema does not allow: the closest allowed name, when one
/// is close (the same once case, `_` and `-` are ignored, or alike by Jaro-Winkler), and the
/// names allowed.
fn unknown_argument(name: &str, known: &[&str]) -> String {
    let mut message = format!("unknown argument {name:?}");
    if let Some(near) = crate::suggest::closest(name, known.iter().copied()) {
        message.push_str(&format!(": did you mean `{near}`?"));
    }
    if known.is_empty() {
        message.push_str("; remove it");
    } else {
        let mut listed: Vec<&str> = known.iter().take(MAX_LISTED).copied().collect();
        listed.sort_unstable();
        message.push_str(&format!(
            " (the arguments are: {}{})",
            listed.join(", "),
            if known.len() > MAX_LISTED {
                ", ..."
            } else {
                ""
            }
        ));
    }
    message
}

/// The message for a value of the wrong type: what was expected and what came, with the fix
/// when the value is a quoted number or boolean.
fn wrong_type(kind: &TypeKind, got: &Value) -> String {
    let expected = match kind {
        TypeKind::Single(t) => type_name(*t).to_string(),
        TypeKind::Multiple(set) => {
            // an optional argument is `[T, "null"]`: "an integer (or null)"
            let names: Vec<&str> = set
                .iter()
                .filter(|t| *t != JsonType::Null)
                .map(type_name)
                .collect();
            let or_null = if set.contains(JsonType::Null) {
                " (or null)"
            } else {
                ""
            };
            match names.as_slice() {
                [one] => format!("{one}{or_null}"),
                many => format!("one of {}{or_null}", many.join(", ")),
            }
        }
    };
    let mut message = format!("expected {expected}, got {}", describe(got));
    let wants = |t: JsonType| match kind {
        TypeKind::Single(s) => *s == t,
        TypeKind::Multiple(set) => set.contains(t),
    };
    if let Value::String(s) = got {
        let t = s.trim();
        let quoted = (wants(JsonType::Integer) && t.parse::<i64>().is_ok())
            || (wants(JsonType::Number) && t.parse::<f64>().is_ok_and(f64::is_finite))
            || (wants(JsonType::Boolean) && matches!(t, "true" | "false"));
        let hint = quoted.then(|| format!("send {t} without quotes"));
        if let Some(hint) = hint {
            message.push_str(&format!("; {hint}"));
        }
    }
    message
}

fn type_name(t: JsonType) -> &'static str {
    match t {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean (true or false)",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
    }
}

/// A value as the model sent it, in a few words: `the string "3"`, `the number 2.5`,
/// `an array of 3 items`.
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => {
            let n = s.chars().count();
            if n > 40 {
                let head: String = s.chars().take(40).collect();
                format!("the string {head:?}... ({n} characters)")
            } else {
                format!("the string {s:?}")
            }
        }
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(o) => format!("an object with {} keys", o.len()),
    }
}

/// Escapes one reference token of a JSON pointer (RFC 6901 section 3: `~` as `~0`, `/` as `~1`).
pub fn escape_pointer(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains(['~', '/']) {
        token.replace('~', "~0").replace('/', "~1").into()
    } else {
        token.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_deferred_schema_compiles_at_its_first_use_and_validates_as_a_compiled_one() {
        let value = json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
            "additionalProperties": false
        });
        let deferred = CompiledSchema::deferred("t", "inputSchema", value.clone()).unwrap();
        assert!(
            deferred.validator.get().is_none(),
            "nothing compiled before the first use"
        );
        let compiled = CompiledSchema::compile("t", "inputSchema", &value).unwrap();
        for v in [
            json!({"n": 1}),
            json!({"n": "1"}),
            json!({}),
            json!({"n": 1, "m": 2}),
        ] {
            assert_eq!(deferred.is_valid(&v), compiled.is_valid(&v), "{v}");
            assert_eq!(deferred.faults(&v), compiled.faults(&v), "{v}");
        }
        assert!(deferred.validator.get().is_some_and(Result::is_ok));
    }

    #[test]
    fn a_deferred_schema_that_does_not_compile_refuses_every_value_saying_why() {
        // the root is checked at once, as at registration
        let err = CompiledSchema::deferred("t", "inputSchema", json!({"type": "array"}));
        assert!(
            matches!(err, Err(RegistrationError::InvalidSchema { ref pointer, .. }) if pointer == "/type")
        );
        // the rest at the first use: never a panic, and the fault is the tool's
        let broken = CompiledSchema::deferred(
            "t",
            "outputSchema",
            json!({"type": "object", "properties": {"n": {"type": "integr"}}}),
        )
        .unwrap();
        assert!(!broken.is_valid(&json!({"n": 1})));
        let faults = broken.faults(&json!({"n": 1}));
        assert_eq!(faults.len(), 1);
        assert!(
            faults[0].message.contains("outputSchema does not compile")
                && faults[0].message.contains("fault of the tool"),
            "{}",
            faults[0].message
        );
    }

    fn schema() -> CompiledSchema {
        CompiledSchema::compile(
            "t",
            "inputSchema",
            &json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "mode": {"type": "string", "enum": ["a", "b"]},
                    "n": {"type": "integer", "minimum": 1}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        )
        .unwrap()
    }

    #[test]
    fn faults_carry_pointers() {
        let s = schema();
        assert!(s.is_valid(&json!({"path": "x"})));
        let faults = s.faults(&json!({"max_depth": 3, "mode": "c", "n": "1"}));
        let mut pointers: Vec<_> = faults.iter().map(|f| f.pointer.as_str()).collect();
        pointers.sort();
        assert_eq!(pointers, ["/max_depth", "/mode", "/n", "/path"]);
    }

    #[test]
    fn unknown_arguments_name_the_closest_known_one() {
        let s = CompiledSchema::compile(
            "t",
            "inputSchema",
            &json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "timeout_ms": {"type": "integer"},
                    "opts": {
                        "type": "object",
                        "properties": {"max_depth": {"type": "integer"}},
                        "additionalProperties": false
                    }
                },
                "additionalProperties": false
            }),
        )
        .unwrap();
        let message = |args: serde_json::Value| {
            let f = s.faults(&args);
            assert_eq!(f.len(), 1, "{f:?}");
            (f[0].pointer.clone(), f[0].message.clone())
        };
        for wrong in ["timeout", "timeoutMs", "TIMEOUT_MS", "timout_ms"] {
            let (pointer, m) = message(json!({ wrong: 1 }));
            assert_eq!(pointer, format!("/{wrong}"));
            assert!(m.contains("did you mean `timeout_ms`?"), "{wrong}: {m}");
            assert!(
                m.contains("(the arguments are: command, opts, timeout_ms)"),
                "{m}"
            );
        }
        let (pointer, m) = message(json!({"opts": {"maxdepth": 2}}));
        assert_eq!(pointer, "/opts/maxdepth");
        assert!(m.contains("did you mean `max_depth`?"), "{m}");
        // nothing close: no guess, the list only
        let (_, m) = message(json!({"zebra": 1}));
        assert!(!m.contains("did you mean"), "{m}");
        assert!(m.contains("the arguments are"), "{m}");
    }

    #[test]
    fn type_errors_say_what_was_expected_and_what_came() {
        let s = schema();
        let f = s.faults(&json!({"path": "x", "n": "3"}));
        assert_eq!(
            f,
            [ArgumentFault {
                pointer: "/n".into(),
                message: "expected an integer, got the string \"3\"; send 3 without quotes".into()
            }]
        );
        for (value, got) in [
            (json!(2.5), "the number 2.5"),
            (json!(true), "the boolean true"),
            (json!(null), "null"),
            (json!([1, 2]), "an array of 2 items"),
            (json!({"a": 1}), "an object with 1 keys"),
            (json!("three"), "the string \"three\""),
        ] {
            let f = s.faults(&json!({"path": "x", "n": value}));
            assert_eq!(
                f[0].message,
                format!("expected an integer, got {got}"),
                "{value}"
            );
        }
        let f = s.faults(&json!({"path": 7}));
        assert_eq!(f[0].message, "expected a string, got the number 7");
        let optional = CompiledSchema::compile(
            "t",
            "inputSchema",
            &json!({"type": "object", "properties": {
                "limit": {"type": ["integer", "null"]},
                "either": {"type": ["string", "number"]}
            }}),
        )
        .unwrap();
        let f = optional.faults(&json!({"limit": "3", "either": true}));
        let mut messages: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
        messages.sort_unstable();
        assert_eq!(
            messages,
            [
                "expected an integer (or null), got the string \"3\"; send 3 without quotes",
                "expected one of a number, a string, got the boolean true",
            ]
        );
        let long = "x".repeat(100);
        let f = s.faults(&json!({"path": "x", "n": long}));
        assert!(
            f[0].message.ends_with("... (100 characters)"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn bad_schema_names_the_pointer() {
        let err = CompiledSchema::compile(
            "t",
            "inputSchema",
            &json!({"type": "object", "properties": {"p": {"type": "strin"}}}),
        )
        .unwrap_err();
        match err {
            RegistrationError::InvalidSchema { pointer, tool, .. } => {
                assert_eq!(tool, "t");
                assert!(pointer.starts_with("/properties/p"), "{pointer}");
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn root_must_be_object() {
        for bad in [json!(true), json!({"type": "string"}), json!({})] {
            assert!(CompiledSchema::compile("t", "inputSchema", &bad).is_err());
        }
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(escape_pointer("a/b~c"), "a~1b~0c");
        assert_eq!(escape_pointer("plain"), "plain");
    }

    #[test]
    fn patterns_run_in_linear_time_and_those_needing_backtracking_are_left_unchecked() {
        let schema = json!({"type": "object", "properties": {
            "nested": {"type": "string", "pattern": "^(a+)+$"},
            "look": {"type": "string", "pattern": "(?=(a+))\\1*b"},
            "a/b": {"type": "string", "pattern": "^(?!x)"},
            "digits": {"type": "string", "pattern": "^\\d{3}$"}
        }});
        let s = CompiledSchema::compile("t", "inputSchema", &schema).unwrap();
        // took 113 s (debug) on a backtracking engine: 20,000 characters at each start position
        let long = "a".repeat(20_000) + "!";
        assert!(s.is_valid(&json!({"look": long})));
        assert!(s.is_valid(&json!({"a/b": "x"})), "left unchecked");
        assert!(
            !s.is_valid(&json!({"nested": long})),
            "a plain pattern is still checked"
        );
        assert!(s.is_valid(&json!({"digits": "123"})));
        assert_eq!(s.faults(&json!({"digits": "12"}))[0].pointer, "/digits");

        // not a regular expression at all, a lookaround as a property pattern, and more
        // unchecked patterns than one schema may have: still faults of the schema
        let many: serde_json::Map<String, Value> = (0..40)
            .map(|i| {
                (
                    format!("p{i}"),
                    json!({"type": "string", "pattern": "(?=x)"}),
                )
            })
            .collect();
        for bad in [
            json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "("}}}),
            json!({"type": "object", "patternProperties": {"(?=x)": {"type": "string"}}}),
            json!({"type": "object", "properties": many}),
        ] {
            let err = CompiledSchema::compile("t", "inputSchema", &bad).unwrap_err();
            assert!(
                matches!(err, RegistrationError::InvalidSchema { .. }),
                "{err}"
            );
        }
    }
}
