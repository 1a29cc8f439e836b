//! The tool contract: the schema the model reads and the metadata the runtime reads.

use crate::error::RegistrationError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The default per-call timeout: 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default cap on a result's rendered size before truncation: 64 KiB.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 64 * 1024;

/// What a tool does to the world. The runtime enforces these: `read_only` tools get a
/// read-only workspace, `idempotent` decides retries, `concurrency_safe` decides parallelism,
/// `destructive` makes the default policy ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Effects {
    /// The tool does not modify its environment.
    pub read_only: bool,
    /// The tool may perform destructive updates (delete, overwrite). Meaningful only when not
    /// `read_only`.
    pub destructive: bool,
    /// Calling it again with the same arguments has no additional effect; failed calls may be
    /// retried.
    pub idempotent: bool,
    /// The tool reaches outside the workspace (network, other systems).
    pub open_world: bool,
    /// Calls may run at the same time as other calls.
    pub concurrency_safe: bool,
}

impl Effects {
    /// Read-only, idempotent, concurrency-safe, closed-world: the effects of a pure read.
    pub const fn read_only() -> Self {
        Effects {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
            concurrency_safe: true,
        }
    }

    /// Side-effecting, destructive, not idempotent, not concurrency-safe: the strictest
    /// defaults, and what an imported definition gets when it says nothing.
    pub const fn side_effecting() -> Self {
        Effects {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: false,
            concurrency_safe: false,
        }
    }
}

/// The risk class the default policy uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads inside the workspace.
    Read,
    /// Writes inside the workspace.
    Write,
    /// Reaches systems outside the workspace.
    External,
    /// Can do harm that is hard to undo (a shell, sending mail).
    Dangerous,
}

impl Risk {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Risk::Read => "read",
            Risk::Write => "write",
            Risk::External => "external",
            Risk::Dangerous => "dangerous",
        }
    }
}

/// One example call shown to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// What the example shows.
    pub description: String,
    /// The arguments object.
    pub arguments: Value,
}

/// The contract of one tool: name, schemas and metadata.
///
/// Built with [`ToolSpec::builder`]; the name is checked by [`validate_name`] and the schemas
/// are compiled when the tool is registered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// Unique name, 1 to 128 characters of `A-Za-z0-9_.-` (MCP tool names).
    pub name: Arc<str>,
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// For the model: when to use the tool, when not, and what it returns.
    pub description: String,
    /// JSON Schema (2020-12) of the arguments object; its root has `"type": "object"`.
    pub input_schema: Value,
    /// JSON Schema (2020-12) of the structured output, when the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Example calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
    /// What the tool does to the world.
    pub effects: Effects,
    /// Risk class.
    pub risk: Risk,
    /// Per-call timeout, in milliseconds on the wire.
    #[serde(with = "duration_ms", rename = "timeoutMs")]
    pub timeout: Duration,
    /// Results whose rendered text is longer than this many bytes are truncated to a preview
    /// with a handle to the full result.
    pub max_result_bytes: usize,
    /// Free-form tags, used by profiles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Version; several versions of one name can be registered and a caller can pin one.
    pub version: Arc<str>,
    /// Top-level arguments whose strings are passed as sent (file content): the sanitize stage
    /// refuses only NUL in them, not other control characters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verbatim_arguments: Vec<String>,
    /// Whether a call of this side-effecting tool sent without an idempotency key gets one
    /// derived from its caller, tool and arguments (default true), so the same call sent
    /// again within the configured window is answered from the ledger instead of acting
    /// twice. `false` for a tool whose identical calls are meant to act each time (running
    /// the tests again after an edit); such calls are deduplicated only by a key the caller
    /// sends. See [`crate::ledger`].
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub derive_idempotency_key: bool,
    /// The tool whose policy rules this one comes under as well, for a tool that does what
    /// another does under another name: `read_resource` (MCP's `resources/read`) reads a
    /// workspace file as `read_file` does, so a rule naming `read_file` (`tool = "read_file"`,
    /// `tool = "read_*"`) holds for it too and a deny over `path:secret/**` cannot be
    /// escaped through `resources/read`; a rule naming the tool itself still holds for it
    /// alone. Set only by the code that builds the spec ([`ToolSpecBuilder::rules_as`]):
    /// never read from or written to a serialized spec, since an allow rule of the other tool
    /// applies too and a definition from elsewhere must not claim one.
    #[serde(skip)]
    pub rules_as: Option<Arc<str>>,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

mod duration_ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis().min(u64::MAX as u128) as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

impl ToolSpec {
    /// Starts a spec named `name` with an empty-object input schema, side-effecting effects,
    /// risk `write`, the default timeout and result cap, and version `1.0.0`.
    pub fn builder(name: impl Into<Arc<str>>) -> ToolSpecBuilder {
        ToolSpecBuilder {
            spec: ToolSpec {
                name: name.into(),
                title: None,
                description: String::new(),
                input_schema: serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
                output_schema: None,
                examples: Vec::new(),
                effects: Effects::side_effecting(),
                risk: Risk::Write,
                timeout: DEFAULT_TIMEOUT,
                max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
                tags: Vec::new(),
                version: "1.0.0".into(),
                verbatim_arguments: Vec::new(),
                derive_idempotency_key: true,
                rules_as: None,
            },
        }
    }

    /// Whether the tool has `tag`.
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }
}

/// Builder for [`ToolSpec`]. Every setter takes and returns the builder.
#[derive(Debug, Clone)]
#[must_use]
pub struct ToolSpecBuilder {
    spec: ToolSpec,
}

impl ToolSpecBuilder {
    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.spec.title = Some(title.into());
        self
    }
    /// Sets the description for the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.spec.description = description.into();
        self
    }
    /// Sets the input schema (JSON Schema 2020-12, root `"type": "object"`).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.spec.input_schema = schema;
        self
    }
    /// Sets the output schema (JSON Schema 2020-12, root `"type": "object"`).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.spec.output_schema = Some(schema);
        self
    }
    /// Adds an example call.
    pub fn example(mut self, description: impl Into<String>, arguments: Value) -> Self {
        self.spec.examples.push(Example {
            description: description.into(),
            arguments,
        });
        self
    }
    /// Sets the effects.
    pub fn effects(mut self, effects: Effects) -> Self {
        self.spec.effects = effects;
        self
    }
    /// Sets the risk class.
    pub fn risk(mut self, risk: Risk) -> Self {
        self.spec.risk = risk;
        self
    }
    /// Sets the per-call timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.spec.timeout = timeout;
        self
    }
    /// Sets the result cap in bytes.
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.spec.max_result_bytes = bytes;
        self
    }
    /// Adds a tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.spec.tags.push(tag.into());
        self
    }
    /// Sets the version.
    pub fn version(mut self, version: impl Into<Arc<str>>) -> Self {
        self.spec.version = version.into();
        self
    }
    /// Calls without an idempotency key get none derived: identical calls each act (see
    /// [`ToolSpec::derive_idempotency_key`]).
    pub fn no_derived_idempotency_key(mut self) -> Self {
        self.spec.derive_idempotency_key = false;
        self
    }
    /// Puts the tool under the policy rules of `tool` as well (see [`ToolSpec::rules_as`]).
    pub fn rules_as(mut self, tool: impl Into<Arc<str>>) -> Self {
        self.spec.rules_as = Some(tool.into());
        self
    }
    /// Marks a top-level argument as verbatim (see [`ToolSpec::verbatim_arguments`]).
    pub fn verbatim_argument(mut self, name: impl Into<String>) -> Self {
        self.spec.verbatim_arguments.push(name.into());
        self
    }
    /// Checks the name and returns the spec. Schemas are compiled at registration.
    ///
    /// # Errors
    /// [`RegistrationError::InvalidName`] when the name breaks [`validate_name`];
    /// [`RegistrationError::Invalid`] for a zero timeout or result cap, or an empty version.
    pub fn build(self) -> Result<ToolSpec, RegistrationError> {
        let spec = self.spec;
        validate_name(&spec.name)?;
        let invalid = |message: &str| RegistrationError::Invalid {
            tool: spec.name.to_string(),
            message: message.to_string(),
        };
        if spec.timeout.is_zero() {
            return Err(invalid("timeout must be positive"));
        }
        if spec.max_result_bytes < 256 {
            return Err(invalid("max_result_bytes must be at least 256"));
        }
        if spec.version.trim().is_empty() {
            return Err(invalid("version must not be empty"));
        }
        Ok(spec)
    }
}

/// Checks a tool name against MCP's rule (specification 2025-11-25, "Tool names"): 1 to 128
/// characters, each one of `A-Z a-z 0-9 _ - .`.
///
/// # Errors
/// [`RegistrationError::InvalidName`] saying which part of the rule is broken.
pub fn validate_name(name: &str) -> Result<(), RegistrationError> {
    let why = if name.is_empty() {
        Some("it is empty")
    } else if name.len() > 128 {
        Some("it is longer than 128 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        Some("only A-Z, a-z, 0-9, '_', '-' and '.' are allowed")
    } else {
        None
    };
    match why {
        Some(why) => Err(RegistrationError::InvalidName {
            name: name.to_string(),
            why,
        }),
        None => Ok(()),
    }
}

impl ToolSpecBuilder {
    /// Replaces the name (checked by [`ToolSpecBuilder::build`]).
    pub fn name(mut self, name: &str) -> Self {
        self.spec.name = name.into();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_mcp_rule() {
        for ok in ["a", "read_file", "flight.book", "A-b_c.9", &"x".repeat(128)] {
            assert!(validate_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "has space", "slash/x", "é", "a\0b", &"x".repeat(129)] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn builder_refuses_bad_metadata() {
        assert!(ToolSpec::builder("t")
            .timeout(Duration::ZERO)
            .build()
            .is_err());
        assert!(ToolSpec::builder("t").max_result_bytes(10).build().is_err());
        assert!(ToolSpec::builder("t").version(" ").build().is_err());
        assert!(ToolSpec::builder("bad name").build().is_err());
    }

    #[test]
    fn spec_round_trips_with_mcp_names() {
        let spec = ToolSpec::builder("t")
            .description("d")
            .timeout(Duration::from_millis(1500))
            .build()
            .unwrap();
        let v = serde_json::to_value(&spec).unwrap();
        assert_eq!(v["inputSchema"]["type"], "object");
        assert_eq!(v["timeoutMs"], 1500);
        let back: ToolSpec = serde_json::from_value(v).unwrap();
        assert_eq!(back, spec);
    }
}
