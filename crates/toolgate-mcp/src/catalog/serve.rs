//! The MCP methods over [`super::Catalogs`]: `resources/list`, `resources/templates/list`,
//! `resources/read`, `resources/subscribe` and `unsubscribe`, `prompts/list`, `prompts/get`,
//! `completion/complete`.
//!
//! Cursors are opaque to clients: `tgc1.` and the hex of `N:CURSOR` (the catalog's index and
//! its own cursor, empty for its first page) for resources, of `N` (the index of the next
//! item) for templates and prompts, at most 2 KiB. A cursor the server did not hand out is
//! `-32602`.

use super::{Calls, Catalogs, Target};
use crate::handler::Connection;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ErrorData, GetPromptRequestParams,
    GetPromptResponse, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResponse, Reference,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{json, Value};
use toolgate_core::ToolCall;

const CURSOR_PREFIX: &str = "tgc1.";
const MAX_CURSOR_BYTES: usize = 2048;

fn encode(text: &str) -> String {
    let mut s = String::with_capacity(CURSOR_PREFIX.len() + text.len() * 2);
    s.push_str(CURSOR_PREFIX);
    for b in text.bytes() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn decode(cursor: &str, method: &str) -> Result<String, ErrorData> {
    let bad = || {
        ErrorData::invalid_params(
            format!("invalid cursor: send a nextCursor from a previous {method}, or none"),
            Some(json!({ "cursor": cursor.get(..64).unwrap_or(cursor) })),
        )
    };
    let hex = cursor.strip_prefix(CURSOR_PREFIX).ok_or_else(bad)?;
    if hex.is_empty() || hex.len() % 2 != 0 || hex.len() > MAX_CURSOR_BYTES {
        return Err(bad());
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(bad)?;
    String::from_utf8(bytes).map_err(|_| bad())
}

/// The index a templates or prompts cursor names.
fn index_of(cursor: Option<&str>, method: &str) -> Result<usize, ErrorData> {
    match cursor {
        None => Ok(0),
        Some(c) => decode(c, method)?.parse().map_err(|_| {
            ErrorData::invalid_params(
                format!("invalid cursor: send a nextCursor from a previous {method}, or none"),
                None,
            )
        }),
    }
}

/// One page of `items` from `start`, and the cursor of the next.
fn page<T: Clone>(items: &[T], start: usize, size: usize) -> (Vec<T>, Option<String>) {
    let start = start.min(items.len());
    let end = (start + size).min(items.len());
    let next = (end < items.len()).then(|| encode(&end.to_string()));
    (items[start..end].to_vec(), next)
}

impl Connection {
    fn catalogs(&self) -> &Catalogs {
        &self.shared().catalogs
    }

    pub(crate) async fn serve_list_resources(
        &self,
        cursor: Option<&str>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        const METHOD: &str = "resources/list";
        let catalogs = &self.catalogs().0;
        let (mut at, mut inner) = match cursor {
            None => (0, None),
            Some(c) => {
                let text = decode(c, METHOD)?;
                let (i, rest) = text
                    .split_once(':')
                    .and_then(|(i, rest)| Some((i.parse::<usize>().ok()?, rest)))
                    .filter(|(i, _)| *i < catalogs.len())
                    .ok_or_else(|| {
                        ErrorData::invalid_params(
                            "invalid cursor: send a nextCursor from a previous resources/list, \
                             or none",
                            None,
                        )
                    })?;
                (i, (!rest.is_empty()).then(|| rest.to_string()))
            }
        };
        let calls = Calls::new(self, ctx);
        // the first catalog from `at` with something to list, or the end
        while at < catalogs.len() {
            let page = catalogs[at]
                .list_resources(&calls, inner.as_deref())
                .await?;
            let next = match page.next {
                Some(n) => Some(encode(&format!("{at}:{n}"))),
                None if at + 1 < catalogs.len() => Some(encode(&format!("{}:", at + 1))),
                None => None,
            };
            if !page.items.is_empty() || next.is_none() {
                let mut out = ListResourcesResult::with_all_items(page.items);
                out.next_cursor = next;
                return Ok(out);
            }
            at += 1;
            inner = None;
        }
        Ok(ListResourcesResult::with_all_items(Vec::new()))
    }

    pub(crate) async fn serve_list_resource_templates(
        &self,
        cursor: Option<&str>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let start = index_of(cursor, "resources/templates/list")?;
        let calls = Calls::new(self, ctx);
        let mut all = Vec::new();
        for c in &self.catalogs().0 {
            all.extend(c.list_resource_templates(&calls).await?);
        }
        let (items, next) = page(&all, start, self.shared().page_size);
        let mut out = ListResourceTemplatesResult::with_all_items(items);
        out.next_cursor = next;
        Ok(out)
    }

    pub(crate) async fn serve_list_prompts(
        &self,
        cursor: Option<&str>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let start = index_of(cursor, "prompts/list")?;
        let calls = Calls::new(self, ctx);
        let mut all = Vec::new();
        for c in &self.catalogs().0 {
            all.extend(c.list_prompts(&calls).await?);
        }
        let (items, next) = page(&all, start, self.shared().page_size);
        let mut out = ListPromptsResult::with_all_items(items);
        out.next_cursor = next;
        Ok(out)
    }

    pub(crate) async fn serve_read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let Some(target) = self.catalogs().0.iter().find_map(|c| c.read(&uri)) else {
            let uri = super::convert::shown(&uri);
            return Err(ErrorData::invalid_params(
                format!(
                    "resource {uri} not found: no resource of this server has that URI; list \
                     them with resources/list (or use a resource template)"
                ),
                Some(json!({ "uri": uri })),
            ));
        };
        let id = crate::handler::request_id(&ctx);
        let call = ToolCall::new(id, target.tool, target.arguments);
        let (result, left) =
            Box::pin(self.run(call, request.request_state, request.input_responses, ctx)).await;
        if let Some(e) = left.protocol_error {
            return Err(e);
        }
        if let Some(question) = left.question {
            return Ok(ReadResourceResponse::InputRequired(question));
        }
        super::to_read_result(&uri, result).map(ReadResourceResponse::Complete)
    }

    pub(crate) async fn serve_get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = request.name;
        let arguments = request.arguments.unwrap_or_default();
        let mut found = None;
        for c in &self.catalogs().0 {
            found = c.get_prompt(&name, &arguments).await;
            if found.is_some() {
                break;
            }
        }
        let target = found.unwrap_or_else(|| {
            let name = super::convert::shown(&name);
            Err(ErrorData::invalid_params(
                format!("prompt {name:?} not found: list the prompts with prompts/list"),
                Some(json!({ "name": name })),
            ))
        })?;
        let Target { tool, arguments } = target;
        let id = crate::handler::request_id(&ctx);
        let call = ToolCall::new(id, tool, arguments);
        let (result, left) =
            Box::pin(self.run(call, request.request_state, request.input_responses, ctx)).await;
        if let Some(e) = left.protocol_error {
            return Err(e);
        }
        if let Some(question) = left.question {
            return Ok(GetPromptResponse::InputRequired(question));
        }
        super::to_prompt_result(&name, result).map(GetPromptResponse::Complete)
    }

    pub(crate) async fn serve_complete(
        &self,
        request: CompleteRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let calls = Calls::new(self, &ctx);
        for c in &self.catalogs().0 {
            if let Some(values) = c.complete(&calls, &request) {
                let mut info = values.await?;
                if info.values.len() > CompletionInfo::MAX_VALUES {
                    info.values.truncate(CompletionInfo::MAX_VALUES);
                    info.has_more = Some(true);
                }
                return Ok(CompleteResult::new(info));
            }
        }
        let (what, reference) = match &request.r#ref {
            Reference::Prompt(p) => {
                let name = super::convert::shown(&p.name);
                (
                    format!("prompt {name:?}"),
                    json!({"type": "ref/prompt", "name": name}),
                )
            }
            Reference::Resource(r) => {
                let uri = super::convert::shown(&r.uri);
                (
                    format!("resource template {uri:?}"),
                    json!({"type": "ref/resource", "uri": uri}),
                )
            }
            _ => ("the reference".to_string(), Value::Null),
        };
        Err(ErrorData::invalid_params(
            format!(
                "{what} is not served here: complete the arguments of a prompt from \
                 prompts/list or a template from resources/templates/list"
            ),
            Some(json!({ "ref": reference })),
        ))
    }

    /// `resources/subscribe` (`on`) and `resources/unsubscribe` of `uri` for this session,
    /// by the first catalog that claims `uri`.
    pub(crate) async fn serve_subscribe(
        &self,
        uri: &str,
        on: bool,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let calls = Calls::new(self, ctx);
        let subscriber = self.subscriber(ctx.peer.clone());
        for c in &self.catalogs().0 {
            if let Some(done) = c.subscribe(&calls, &subscriber, uri, on) {
                return done.await;
            }
        }
        let uri = super::convert::shown(uri);
        Err(ErrorData::invalid_params(
            format!(
                "resource {uri} cannot be subscribed to: no resource of this server with that \
                 URI sends updates; subscribe to a URI from resources/list"
            ),
            Some(json!({ "uri": uri })),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn cursors_round_trip_and_foreign_ones_are_refused() {
        for text in ["0:", "1:fs1.src/main.rs", "12", "2:ünï:code"] {
            assert_eq!(decode(&encode(text), "m").unwrap(), text);
        }
        for bad in [
            "", "garbage", "tgc1.", "tgc1.zz", "tgc1.0", "tg1.3031", "tgc1.ff",
        ] {
            let e = decode(bad, "resources/list").unwrap_err();
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{bad}");
            assert!(e.message.contains("resources/list"), "{bad}: {}", e.message);
        }
        let long = format!("tgc1.{}", "30".repeat(MAX_CURSOR_BYTES));
        assert!(decode(&long, "m").is_err());
        assert_eq!(index_of(None, "m").unwrap(), 0);
        assert_eq!(index_of(Some(&encode("7")), "m").unwrap(), 7);
        assert!(index_of(Some(&encode("x")), "m").is_err());
    }

    #[test]
    fn pages_cover_every_item_once() {
        let items: Vec<u32> = (0..7).collect();
        let (first, next) = page(&items, 0, 3);
        assert_eq!(first, [0, 1, 2]);
        let start = index_of(next.as_deref(), "m").unwrap();
        let (second, next) = page(&items, start, 3);
        assert_eq!(second, [3, 4, 5]);
        let (last, next) = page(&items, index_of(next.as_deref(), "m").unwrap(), 3);
        assert_eq!((last, next), (vec![6], None));
        // a cursor past the end is an empty last page, never a panic
        assert_eq!(page(&items, 99, 3), (vec![], None));
    }
}
