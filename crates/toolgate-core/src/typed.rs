//! Typed tools: input and output schemas derived from Rust types with schemars.

use crate::context::ToolContext;
use crate::error::{ArgumentFault, RegistrationError, ToolError};
use crate::ledger::Reconciliation;
use crate::result::{Content, ToolOutput};
use crate::spec::{ToolSpec, ToolSpecBuilder};
use crate::tool::{Args, Resource, Tool};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::future::Future;

/// A tool whose arguments and output are Rust types.
///
/// The pipeline validates the arguments against the schema derived from `Args`, decodes them,
/// and checks the serialized `Output` against the schema derived from `Output`. Use
/// `#[serde(deny_unknown_fields)]` on `Args` so an unknown argument is refused (the derived
/// schema then says `additionalProperties: false`).
///
/// ```
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
/// use toolgate_core::{ToolContext, ToolError, ToolSpec, ToolSpecBuilder, TypedTool, Effects};
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// struct EchoArgs { text: String }
///
/// #[derive(Serialize, JsonSchema)]
/// struct EchoOut { text: String }
///
/// struct Echo;
///
/// impl TypedTool for Echo {
///     type Args = EchoArgs;
///     type Output = EchoOut;
///     fn spec(&self) -> ToolSpecBuilder {
///         ToolSpec::builder("echo").description("Returns its text.").effects(Effects::read_only())
///     }
///     async fn call(&self, args: EchoArgs, _ctx: ToolContext) -> Result<EchoOut, ToolError> {
///         Ok(EchoOut { text: args.text })
///     }
/// }
/// ```
pub trait TypedTool: Send + Sync + 'static {
    /// The decoded arguments.
    type Args: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// The structured output; its schema becomes `outputSchema`.
    type Output: Serialize + JsonSchema + Send + 'static;

    /// The contract without schemas (they are derived from `Args` and `Output`).
    fn spec(&self) -> ToolSpecBuilder;

    /// Semantic checks beyond the schema and the resources the call touches (see
    /// [`Tool::guard`]). The default declares none.
    ///
    /// # Errors
    /// `unsafe_input` or `invalid_arguments` for a call that must not run.
    fn guard(&self, args: &Self::Args, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        let _ = (args, ctx);
        Ok(Vec::new())
    }

    /// Before an approval question: why the call would fail, or what it would change (see
    /// [`Tool::preview`]). The default gives `Ok(None)`.
    ///
    /// # Errors
    /// Why the call would fail: nobody is asked.
    fn preview(&self, args: &Self::Args, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        let _ = (args, ctx);
        Ok(None)
    }

    /// The canonical effect of a side-effecting call, from which the idempotency ledger
    /// derives its key and checks its arguments (see [`Tool::effect`]). The default gives
    /// `Ok(None)`: the arguments as sent.
    ///
    /// # Errors
    /// Why the call cannot run: it ends with the error, before the ledger is asked.
    fn effect(&self, args: &Self::Args, ctx: &ToolContext) -> Result<Option<Value>, ToolError> {
        let _ = (args, ctx);
        Ok(None)
    }

    /// Runs the call.
    fn call(
        &self,
        args: Self::Args,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;

    /// The text a model reads for `output`: one text block sent beside the structured content
    /// (MCP `content`, next to `structuredContent`), or `None` (the default) for the
    /// structured content's compact JSON.
    ///
    /// The MCP specification (2025-11-25, "Tools", "Structured Content") says a tool that
    /// returns structured content SHOULD also return it serialized in a text block, for
    /// clients without structured content; many clients hand the model that text block and
    /// nothing else. A text-shaped result (a file's numbered lines, a command's output) reads
    /// better as its plain rendering than as a JSON string with every line break and quote
    /// escaped, and it is smaller on the wire: the JSON text is escaped again inside the
    /// frame. Render every field the model needs (where the result stops and how to read on),
    /// since a model may see nothing else; the structured content still carries them all.
    ///
    /// Called once per successful call (and per result [`TypedTool::reconcile`] finds),
    /// after [`TypedTool::call`], before the finish stage: the text is cleaned like the rest
    /// of the output, counts toward the tool's result byte limit in place of the JSON, and is
    /// cut to a preview past it ([`crate::pipeline::finish`]). An empty string counts as
    /// `None`: a model is never handed an empty block.
    fn text(&self, output: &Self::Output) -> Option<String> {
        let _ = output;
        None
    }

    /// Asks the system the tool acts on whether an earlier call with idempotency key `key` and
    /// these arguments had its effect (see [`Tool::reconcile`]). The default cannot tell
    /// ([`Reconciliation::Unknown`]): the operator settles such entries.
    fn reconcile(
        &self,
        key: &str,
        args: &Self::Args,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<Reconciliation<Self::Output>, ToolError>> + Send {
        let _ = (key, args, ctx);
        std::future::ready(Ok(Reconciliation::Unknown))
    }
}

/// The JSON Schema (2020-12) of `T`, with subschemas inlined, no root `title`, and only
/// standard keywords, as tool schemas are written: schemars's own integer and float formats
/// (`uint64`, `uint32`, `uint`, `int32`, `double`, ...) are not JSON Schema formats, and
/// clients warn about them or carry them into strict converters, so they become the bounds
/// they stand for (`minimum: 0` and `maximum: 18446744073709551615` for a `u64`).
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .with_transform(schemars::transform::RecursiveTransform(standard_formats))
        .into_generator();
    let mut v = generator.into_root_schema_for::<T>().to_value();
    if let Some(obj) = v.as_object_mut() {
        obj.remove("title");
    }
    v
}

/// Replaces a numeric `format` schemars writes with the bounds it stands for. A number past
/// them (`2^64` for a `u64`, which JSON parses as a float) is then refused by the schema, at
/// its own pointer, rather than by the decoder.
fn standard_formats(schema: &mut schemars::Schema) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    let Some(format) = obj.get("format").and_then(Value::as_str) else {
        return;
    };
    let (min, max): (Value, Value) = match format {
        "uint8" => (0.into(), u8::MAX.into()),
        "uint16" => (0.into(), u16::MAX.into()),
        "uint32" => (0.into(), u32::MAX.into()),
        "uint64" | "uint" => (0.into(), u64::MAX.into()),
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        "float" | "double" | "uint128" | "int128" => {
            obj.remove("format");
            return;
        }
        _ => return,
    };
    obj.remove("format");
    obj.entry("minimum").or_insert(min);
    obj.entry("maximum").or_insert(max);
}

/// Adapts a [`TypedTool`] to [`Tool`]: the spec gets derived schemas once, here.
pub struct Typed<T> {
    tool: T,
    spec: ToolSpec,
}

impl<T: TypedTool> Typed<T> {
    /// Builds the spec with derived schemas.
    ///
    /// # Errors
    /// The spec's build errors (name, timeout, result cap).
    pub fn new(tool: T) -> Result<Self, RegistrationError> {
        let spec = tool
            .spec()
            .input_schema(schema_for::<T::Args>())
            .output_schema(schema_for::<T::Output>())
            .build()?;
        Ok(Typed { tool, spec })
    }

    /// The wrapped tool.
    pub fn inner(&self) -> &T {
        &self.tool
    }

    /// `out` as the pipeline carries it: its JSON value as the structured content and, when
    /// the tool renders one ([`TypedTool::text`]), its text as the one content block.
    fn output(&self, out: &T::Output) -> Result<ToolOutput, ToolError> {
        let structured = serde_json::to_value(out)
            .map_err(|e| ToolError::internal(format!("the output does not serialize: {e}")))?;
        let content = match self.tool.text(out) {
            Some(text) if !text.is_empty() => vec![Content::text(text)],
            _ => Vec::new(),
        };
        Ok(ToolOutput {
            structured: Some(structured),
            content,
        })
    }
}

/// `value` with every number that is a float with no fractional part, within the range of
/// `u64` or `i64`, written as that integer; `None` when it has none.
fn integral_floats_as_integers(value: &Value) -> Option<Value> {
    fn walk(v: &mut Value, changed: &mut bool) {
        match v {
            Value::Number(n) if n.is_f64() => {
                let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0) else {
                    return;
                };
                // `u64::MAX as f64` rounds up to 2^64, which does not fit: a strict bound
                let int = if (0.0..u64::MAX as f64).contains(&f) {
                    Some(Value::from(f as u64))
                } else if (i64::MIN as f64..0.0).contains(&f) {
                    Some(Value::from(f as i64))
                } else {
                    None
                };
                if let Some(int) = int {
                    *v = int;
                    *changed = true;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, changed)),
            Value::Object(map) => map.values_mut().for_each(|i| walk(i, changed)),
            _ => {}
        }
    }
    let mut v = value.clone();
    let mut changed = false;
    walk(&mut v, &mut changed);
    changed.then_some(v)
}

fn wrong_args() -> ToolError {
    ToolError::internal("decoded arguments of the wrong type reached a typed tool")
}

impl<T: TypedTool> Tool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn schemas_derived(&self) -> bool {
        true
    }

    fn decode(&self, arguments: &Value) -> Result<Args, ToolError> {
        let first = T::Args::deserialize(arguments);
        // JSON Schema counts `2.0` and `1e3` as integers (2020-12 validation, "type": a
        // number with a zero fractional part), so the validator passed them, and serde's
        // integer types refuse them: decoded as the integers they are, the decode agrees with
        // the advertised schema instead of failing without saying where
        let decoded = first.or_else(|e| {
            integral_floats_as_integers(arguments)
                .and_then(|v| T::Args::deserialize(&v).ok())
                .ok_or(e)
        });
        match decoded {
            Ok(a) => Ok(Args::new(a)),
            Err(e) => Err(ToolError::invalid_arguments(
                format!("the arguments do not fit this tool: {e}"),
                vec![ArgumentFault {
                    pointer: String::new(),
                    message: e.to_string(),
                }],
            )),
        }
    }

    fn guard(&self, args: &Args, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        let args = args.downcast_ref::<T::Args>().ok_or_else(wrong_args)?;
        self.tool.guard(args, ctx)
    }

    fn preview(&self, args: &Args, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        let args = args.downcast_ref::<T::Args>().ok_or_else(wrong_args)?;
        self.tool.preview(args, ctx)
    }

    fn effect(&self, args: &Args, ctx: &ToolContext) -> Result<Option<Value>, ToolError> {
        let args = args.downcast_ref::<T::Args>().ok_or_else(wrong_args)?;
        self.tool.effect(args, ctx)
    }

    fn call(&self, args: Args, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args = args.downcast::<T::Args>().map_err(|_| wrong_args())?;
            let out = self.tool.call(args, ctx).await?;
            self.output(&out)
        })
    }

    fn reconcile<'a>(
        &'a self,
        key: &'a str,
        args: &'a Args,
        ctx: ToolContext,
    ) -> Option<BoxFuture<'a, Result<Reconciliation, ToolError>>> {
        let args = args.downcast_ref::<T::Args>()?;
        Some(Box::pin(async move {
            Ok(match self.tool.reconcile(key, args, ctx).await? {
                Reconciliation::Done(out) => Reconciliation::Done(self.output(&out)?),
                Reconciliation::NotDone => Reconciliation::NotDone,
                Reconciliation::Unknown => Reconciliation::Unknown,
            })
        }))
    }
}

use serde::Deserialize as _;

#[cfg(test)]
#[path = "typed_tests.rs"]
mod tests;
