//! `read_result`: a page of a result that the pipeline truncated, by its handle.
//!
//! The handle is looked up in the call's result store for the call's own session (a handle
//! of another session is as unknown as a made-up one), and the page is cut on UTF-8 character
//! boundaries by [`toolgate_core::results::page`].

use schemars::JsonSchema;
use serde::Deserialize;
use toolgate_core::results::{page, Page};
use toolgate_core::{Effects, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder, TypedTool};

/// Bytes returned when the call does not say (16 KiB).
pub const DEFAULT_LIMIT: usize = 16 << 10;
/// The most bytes one call may ask for (256 KiB). A page is bounded once escaped as JSON too
/// ([`toolgate_core::results::page`]), and a result carries it twice (structured content and
/// its JSON text), so the whole message stays near 512 KiB: under the 1 MiB that clients and
/// proxies commonly allow for one message or event.
pub const MAX_LIMIT: usize = 256 << 10;
/// The tool's result cap (1 MiB): above any page's JSON (at most [`MAX_LIMIT`] bytes once
/// escaped, plus its few fields), so a page is never truncated behind another handle.
const MAX_RESULT_BYTES: usize = 1 << 20;

/// Arguments of `read_result`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadResultArgs {
    /// The handle from a truncated result (the `handle` in its truncation record or in the
    /// `[... read them with read_result ...]` marker), such as `res_0f3a...`.
    #[schemars(length(min = 1, max = 256))]
    pub handle: String,
    /// The byte offset of the page in the full result (default 0); use `next_offset` from the
    /// previous page, or the offset named in the truncation marker.
    #[serde(default)]
    pub offset: usize,
    /// The most bytes to return (default 16384, at most 262144); a page ends on a character
    /// boundary and is counted as its JSON text (a quote or a line break takes two bytes), so
    /// it can be shorter: go on from `next_offset`.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 262144))]
    pub limit: usize,
}

fn default_limit() -> usize {
    DEFAULT_LIMIT
}

/// The `read_result` tool: see the module docs and the description it gives the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadResult;

const DESCRIPTION: &str = "Read part of an earlier tool result that was too long and was \
truncated. A truncated text shows its head and tail with a marker such as `[... N of M bytes \
truncated; read them with read_result {\"handle\":\"res_...\",\"offset\":1234} ...]`; a \
truncated structured result (JSON) has a `truncation` member whose `omitted` list names each \
shortened array or string and the `offset` where what it leaves out begins, and `handle`. Call \
this tool with that handle and offset to read the part that was left out (of a structured \
result, its JSON text), then go on with `next_offset` until it is absent. Only for handles of \
this session; not for files (use read_file). Returns {text, offset, next_offset, total_bytes} \
(byte offsets into the full result); a page holds at most `limit` bytes (default 16384, at \
most 262144) counted as JSON, so quotes and line breaks count twice. An unknown or expired \
handle fails with reason not_found; an offset past the end with invalid_arguments at /offset.";

impl TypedTool for ReadResult {
    type Args = ReadResultArgs;
    type Output = Page;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("read_result")
            .title("Read truncated result")
            .description(DESCRIPTION)
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("results")
            .max_result_bytes(MAX_RESULT_BYTES)
            .example(
                "Read on from where the preview stopped",
                serde_json::json!({"handle": "res_0123456789abcdef0123456789abcdef", "offset": 43008}),
            )
    }

    async fn call(&self, args: ReadResultArgs, ctx: ToolContext) -> Result<Page, ToolError> {
        let text = ctx
            .results()
            .get(ctx.session_id(), &args.handle)?
            .ok_or_else(|| {
                ToolError::not_found(format!(
                    "no result with handle {:?} for this session: a handle reads only in the \
                     session that got it (over stateless HTTP, for the same caller), for 24 \
                     hours, while the store has room for it; check the handle was copied whole \
                     from a truncated result of this session, or call the tool again for a new \
                     one",
                    args.handle
                ))
            })?;
        page(&text, args.offset, args.limit.clamp(1, MAX_LIMIT))
    }
}
