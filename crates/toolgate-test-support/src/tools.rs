//! Fake tools with controllable behaviour, each a real [`TypedTool`] or [`DynamicTool`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{
    DynamicTool, Effects, Registry, RegistryBuilder, Resource, Risk, ToolContext, ToolError,
    ToolOutput, ToolSpec, ToolSpecBuilder, TypedTool,
};

/// `echo(text) -> {text}`: returns its text unchanged, under the name, description, effects
/// and risk the test chooses. [`Echo::default()`] is the plain one: `echo`, read-only,
/// idempotent, concurrency-safe, risk `read`, tagged `test`.
///
/// With `reads_path`, its guard declares the text as a path it reads (as the file tools do),
/// so path rules of a policy apply to the call.
#[derive(Debug, Clone)]
pub struct Echo {
    /// The name to register under.
    pub name: &'static str,
    /// The human-readable title, if any.
    pub title: Option<&'static str>,
    /// The description.
    pub description: &'static str,
    /// Effects to declare.
    pub effects: Effects,
    /// The risk class to declare.
    pub risk: Risk,
    /// A tag to declare, if any.
    pub tag: Option<&'static str>,
    /// Whether the guard declares the text as a path read ([`Resource::read`]).
    pub reads_path: bool,
}

impl Echo {
    /// A read-only echo named `name` with no title and no tag; set the other fields with
    /// struct update syntax (`Echo { risk: Risk::Write, ..Echo::named("x", "...") }`).
    pub const fn named(name: &'static str, description: &'static str) -> Self {
        Echo {
            name,
            title: None,
            description,
            effects: Effects::read_only(),
            risk: Risk::Read,
            tag: None,
            reads_path: false,
        }
    }
}

impl Default for Echo {
    fn default() -> Self {
        Echo {
            tag: Some("test"),
            ..Echo::named("echo", "Returns its text unchanged.")
        }
    }
}

/// Arguments of [`Echo`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoArgs {
    /// Text to echo back.
    pub text: String,
}

/// Output of [`Echo`].
#[derive(Debug, Serialize, JsonSchema)]
pub struct EchoOut {
    /// The same text.
    pub text: String,
}

impl TypedTool for Echo {
    type Args = EchoArgs;
    type Output = EchoOut;
    fn spec(&self) -> ToolSpecBuilder {
        let mut spec = ToolSpec::builder(self.name)
            .description(self.description)
            .effects(self.effects)
            .risk(self.risk);
        if let Some(title) = self.title {
            spec = spec.title(title);
        }
        if let Some(tag) = self.tag {
            spec = spec.tag(tag);
        }
        spec
    }
    fn guard(&self, args: &EchoArgs, _ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        Ok(if self.reads_path {
            vec![Resource::read(args.text.clone())]
        } else {
            Vec::new()
        })
    }
    async fn call(&self, args: EchoArgs, _ctx: ToolContext) -> Result<EchoOut, ToolError> {
        Ok(EchoOut { text: args.text })
    }
}

/// No arguments (an empty object; unknown arguments refused).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Arguments of [`Sleep`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SleepArgs {
    /// How long to sleep, in milliseconds.
    pub ms: u64,
}

/// Output of [`Sleep`] and the other fakes that return nothing of interest.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Done {
    /// Always true.
    pub done: bool,
}

/// `sleep(ms)`: sleeps; its effects and timeout are chosen by the test.
pub struct Sleep {
    /// Effects to declare.
    pub effects: Effects,
    /// The tool's timeout.
    pub timeout: Duration,
    /// The name to register under.
    pub name: &'static str,
}

impl TypedTool for Sleep {
    type Args = SleepArgs;
    type Output = Done;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder(self.name)
            .description("Sleeps for ms milliseconds.")
            .effects(self.effects)
            .timeout(self.timeout)
    }
    async fn call(&self, args: SleepArgs, _ctx: ToolContext) -> Result<Done, ToolError> {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        Ok(Done { done: true })
    }
}

/// A tool whose handler panics.
pub struct Panics;

impl TypedTool for Panics {
    type Args = NoArgs;
    type Output = Done;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("panics")
            .description("Panics.")
            .effects(Effects::read_only())
    }
    async fn call(&self, _args: NoArgs, _ctx: ToolContext) -> Result<Done, ToolError> {
        panic!("handler exploded with secret stack detail")
    }
}

/// Fails with a transient error `fail_times` times, then succeeds; counts attempts.
pub struct Flaky {
    /// The name to register under.
    pub name: &'static str,
    /// Effects to declare (idempotent or not decides retries).
    pub effects: Effects,
    /// How many calls fail before one succeeds.
    pub fail_times: u32,
    /// Whether the failures are marked transient.
    pub transient: bool,
    /// Handler invocations so far.
    pub attempts: Arc<AtomicU32>,
}

impl TypedTool for Flaky {
    type Args = NoArgs;
    type Output = Done;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder(self.name)
            .description("Fails a few times, then succeeds.")
            .effects(self.effects)
    }
    async fn call(&self, _args: NoArgs, _ctx: ToolContext) -> Result<Done, ToolError> {
        let n = self.attempts.fetch_add(1, Ordering::SeqCst);
        if n < self.fail_times {
            let e = ToolError::failed("upstream busy");
            return Err(if self.transient { e.transient() } else { e });
        }
        Ok(Done { done: true })
    }
}

/// A dynamic tool declaring `outputSchema` {count: integer} that returns `output`.
pub fn bad_output(output: Value) -> DynamicTool {
    let spec = ToolSpec::builder("bad_output")
        .description("Returns whatever the test gave it.")
        .effects(Effects::read_only())
        .output_schema(json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"]
        }))
        .build()
        .expect("a valid spec");
    DynamicTool::new(spec, move |_, _| {
        let output = output.clone();
        async move { Ok(ToolOutput::structured(output)) }
    })
}

/// A dynamic tool returning `bytes` bytes of numbered lines as text, with a result cap of
/// `cap` bytes.
pub fn big_output(bytes: usize, cap: usize) -> DynamicTool {
    let spec = ToolSpec::builder("big_output")
        .description("Returns a large text.")
        .effects(Effects::read_only())
        .max_result_bytes(cap)
        .build()
        .expect("a valid spec");
    DynamicTool::new(spec, move |_, _| async move {
        let mut text = String::with_capacity(bytes + 32);
        let mut i = 0;
        while text.len() < bytes {
            text.push_str(&format!("line {i:06} of the big output\n"));
            i += 1;
        }
        text.truncate(bytes);
        Ok(ToolOutput::text(text))
    })
}

/// A destructive dynamic tool named `delete_all` that counts how often it ran. Tests send
/// `delete_all {}` again and again, each call meant to be judged and run, so it derives no
/// idempotency key (a call sent with one still runs under the ledger).
pub fn destructive(runs: Arc<AtomicU32>) -> DynamicTool {
    let spec = ToolSpec::builder("delete_all")
        .description("Pretends to delete everything.")
        .effects(Effects::side_effecting())
        .risk(Risk::Write)
        .no_derived_idempotency_key()
        .build()
        .expect("a valid spec");
    DynamicTool::new(spec, move |_, _| {
        let runs = runs.clone();
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(ToolOutput::text("deleted"))
        }
    })
}

/// A read-only dynamic tool named `forbidden`, for a policy that denies it
/// ([`crate::policy::DenyTool::FORBIDDEN`]); it answers `ran` if it ever runs.
pub fn forbidden() -> DynamicTool {
    let spec = ToolSpec::builder("forbidden")
        .description("Never runs: the test's policy denies it.")
        .effects(Effects::read_only())
        .build()
        .expect("a valid spec");
    DynamicTool::new(spec, |_, _| async { Ok(ToolOutput::text("ran")) })
}

/// A registry builder with a tool for each outcome the metrics and the store's figures count:
/// `echo` (succeeds; wrong arguments are `invalid_arguments`), `big_output` (10,000 bytes
/// under a 1,000-byte cap: truncated), `delete_all` (destructive: the default policy asks)
/// and `forbidden` (denied under [`crate::policy::DenyTool::FORBIDDEN`]).
pub fn every_outcome() -> RegistryBuilder {
    Registry::builder()
        .tool(Echo::default())
        .tool(big_output(10_000, 1_000))
        .tool(destructive(Arc::new(AtomicU32::new(0))))
        .tool(forbidden())
}

/// A tool that waits for its cancellation token and reports whether it saw it.
pub struct WaitsForCancel {
    /// Set when the handler observed cancellation.
    pub saw_cancel: Arc<AtomicU32>,
}

impl TypedTool for WaitsForCancel {
    type Args = NoArgs;
    type Output = Done;
    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("wait_cancel")
            .description("Waits until cancelled.")
            .effects(Effects::read_only())
            .timeout(Duration::from_secs(60))
    }
    async fn call(&self, _args: NoArgs, ctx: ToolContext) -> Result<Done, ToolError> {
        ctx.cancellation().cancelled().await;
        self.saw_cancel.fetch_add(1, Ordering::SeqCst);
        Ok(Done { done: true })
    }
}
