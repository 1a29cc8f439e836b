//! An upstream's lists (`tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`), read one item at a time.
//!
//! rmcp reads a list answer as a whole: one definition that does not fit MCP's shape (a
//! tool without an `inputSchema`, a description that is a number, a prompt without a name)
//! makes the whole answer unreadable (`Unexpected response type`), and the upstream would
//! serve nothing. Here each page is asked with rmcp's request and its items are read one by
//! one: an item that does not fit is left out and logged with its position, its name when
//! it has one and what is wrong with it, and the others are served.
//!
//! Paging follows `nextCursor` for at most [`MAX_PAGES`] pages and stops at a cursor the
//! upstream gave before, so an upstream that pages forever ends its listing (with an error)
//! instead of growing it until the timeout; a listing keeps at most [`MAX_ITEMS`] items.

use rmcp::model::{
    ClientRequest, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListToolsRequest, PaginatedRequestParams, Prompt, Resource, ResourceTemplate, ServerResult,
    Tool as McpTool,
};
use rmcp::service::{Peer, RoleClient};
use rmcp::ServiceError;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashSet;

/// The most pages one listing follows.
pub(crate) const MAX_PAGES: usize = 100;

/// The most items one listing keeps: each tool is screened, pinned and its schemas compiled,
/// at every start and every `list_changed`, so an upstream listing 20,000 took 19 s a start;
/// the items past it are left out (logged). No client shows a model that many.
pub(crate) const MAX_ITEMS: usize = 2_000;

/// What one list method lists.
pub(crate) trait Listed: DeserializeOwned + Sized {
    /// The method, for messages (`tools/list`).
    const METHOD: &'static str;
    /// The member of the answer that holds the items (`tools`).
    const FIELD: &'static str;
    /// What an item is called in messages (`tool`).
    const ITEM: &'static str;
    /// The request for the page `params` name.
    fn request(params: PaginatedRequestParams) -> ClientRequest;
    /// The page, when rmcp read the answer as this list (every item fit); the answer back
    /// otherwise (rmcp's `CustomResult`, read item by item).
    fn typed(answer: ServerResult) -> Result<Page<Self>, Box<ServerResult>>;
}

/// [`Listed`] for an item type: its method, answer member, name in messages, request,
/// and the typed result rmcp reads and its member.
macro_rules! listed {
    ($item:ty, $method:literal, $field:literal, $name:literal, $request:ident, $result:ident,
     $member:ident) => {
        impl Listed for $item {
            const METHOD: &'static str = $method;
            const FIELD: &'static str = $field;
            const ITEM: &'static str = $name;
            fn request(params: PaginatedRequestParams) -> ClientRequest {
                ClientRequest::$request($request::with_param(params))
            }
            fn typed(answer: ServerResult) -> Result<Page<Self>, Box<ServerResult>> {
                match answer {
                    ServerResult::$result(r) => Ok(Page {
                        items: r.$member,
                        next_cursor: r.next_cursor,
                    }),
                    other => Err(Box::new(other)),
                }
            }
        }
    };
}

listed!(
    McpTool,
    "tools/list",
    "tools",
    "tool",
    ListToolsRequest,
    ListToolsResult,
    tools
);
listed!(
    Prompt,
    "prompts/list",
    "prompts",
    "prompt",
    ListPromptsRequest,
    ListPromptsResult,
    prompts
);
listed!(
    Resource,
    "resources/list",
    "resources",
    "resource",
    ListResourcesRequest,
    ListResourcesResult,
    resources
);
listed!(
    ResourceTemplate,
    "resources/templates/list",
    "resourceTemplates",
    "resource template",
    ListResourceTemplatesRequest,
    ListResourceTemplatesResult,
    resource_templates
);

/// One page: the items that fit, and the cursor of the next page.
#[derive(Debug)]
pub(crate) struct Page<T> {
    pub(crate) items: Vec<T>,
    pub(crate) next_cursor: Option<String>,
}

/// An answer that is not a list of this kind at all, as a [`ServiceError`] (rmcp's `-32603`
/// error data carrying the message).
fn malformed(message: String) -> ServiceError {
    ServiceError::McpError(rmcp::model::ErrorData::internal_error(message, None))
}

/// Asks `upstream`'s `peer` for the page after `cursor` and reads its items one by one.
///
/// # Errors
/// What rmcp's request returns (the upstream's JSON-RPC error, a closed transport), and a
/// `-32603` [`ServiceError::McpError`] for an answer with no `T::FIELD` array or a
/// `nextCursor` that is not a string.
pub(crate) async fn page<T: Listed>(
    peer: &Peer<RoleClient>,
    upstream: &str,
    cursor: Option<String>,
) -> Result<Page<T>, ServiceError> {
    let mut params = PaginatedRequestParams::default();
    params.cursor = cursor;
    let answer = peer.send_request(T::request(params)).await?;
    read_page(upstream, answer)
}

/// `answer` as a page of `T`: as rmcp read it when every item fit, else item by item.
fn read_page<T: Listed>(upstream: &str, answer: ServerResult) -> Result<Page<T>, ServiceError> {
    let answer = match T::typed(answer) {
        Ok(page) => return Ok(page),
        Err(other) => *other,
    };
    let mut answer = serde_json::to_value(answer).map_err(|e| malformed(e.to_string()))?;
    let Some(Value::Array(raw)) = answer.get_mut(T::FIELD).map(Value::take) else {
        return Err(malformed(format!(
            "the upstream's {} answer has no \"{}\" array",
            T::METHOD,
            T::FIELD
        )));
    };
    let next_cursor = match answer.get("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => {
            return Err(malformed(format!(
                "the upstream's {} answer has a nextCursor that is not a string",
                T::METHOD
            )))
        }
    };
    let mut items = Vec::with_capacity(raw.len());
    for (at, item) in raw.into_iter().enumerate() {
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .map(|n| n.chars().take(80).collect::<String>());
        match serde_json::from_value::<T>(item) {
            Ok(t) => items.push(t),
            Err(e) => tracing::error!(
                upstream = %upstream,
                position = at,
                name = name.as_deref().unwrap_or("(none)"),
                why = %e,
                "an upstream {} does not have MCP's shape; it is not served",
                T::ITEM
            ),
        }
    }
    Ok(Page { items, next_cursor })
}

/// Every page of `upstream`'s list, following `nextCursor`.
///
/// # Errors
/// As [`page`], and a `-32603` [`ServiceError::McpError`] when the upstream gives a cursor
/// it gave before or pages past [`MAX_PAGES`].
pub(crate) async fn all<T: Listed>(
    peer: &Peer<RoleClient>,
    upstream: &str,
) -> Result<Vec<T>, ServiceError> {
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let page = page::<T>(peer, upstream, cursor).await?;
        items.extend(page.items);
        if capped::<T>(&mut items, upstream) {
            return Ok(items);
        }
        match page.next_cursor {
            None => return Ok(items),
            Some(c) if !seen.insert(c.clone()) => {
                return Err(malformed(format!(
                    "the upstream's {} gave the cursor {:?} a second time; its list would \
                     never end",
                    T::METHOD,
                    c.chars().take(80).collect::<String>()
                )))
            }
            Some(c) => cursor = Some(c),
        }
    }
    Err(malformed(format!(
        "the upstream's {} has more than {MAX_PAGES} pages",
        T::METHOD
    )))
}

/// Cuts `items` to [`MAX_ITEMS`], logging what was left out; whether it did.
fn capped<T: Listed>(items: &mut Vec<T>, upstream: &str) -> bool {
    if items.len() <= MAX_ITEMS {
        return false;
    }
    tracing::warn!(
        upstream,
        method = T::METHOD,
        kept = MAX_ITEMS,
        left_out = items.len() - MAX_ITEMS,
        "the upstream lists more than {MAX_ITEMS} {}s; the rest are left out",
        T::ITEM
    );
    items.truncate(MAX_ITEMS);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::CustomResult;
    use serde_json::json;

    fn answer(v: Value) -> ServerResult {
        // as rmcp reads an answer off the wire: the typed list, or the raw value when one
        // item does not fit
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_listing_past_the_cap_keeps_the_first_items() {
        let tool = |i: usize| -> McpTool {
            serde_json::from_value(
                json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}),
            )
            .unwrap()
        };
        let mut items: Vec<McpTool> = (0..MAX_ITEMS).map(tool).collect();
        assert!(!capped(&mut items, "up"), "the cap itself is kept whole");
        items.extend((MAX_ITEMS..MAX_ITEMS + 500).map(tool));
        assert!(capped(&mut items, "up"));
        assert_eq!(items.len(), MAX_ITEMS);
        assert_eq!(items.last().unwrap().name, format!("t{}", MAX_ITEMS - 1));
    }

    #[test]
    fn an_item_that_does_not_fit_is_left_out_and_the_others_are_kept() {
        let got = answer(json!({"tools": [
            {"name": "add", "inputSchema": {"type": "object"}},
            {"name": "noschema", "description": "no inputSchema"},
            {"name": "num", "description": 123, "inputSchema": {"type": "object"}},
            "not an object",
            {"name": "say", "description": "says", "inputSchema": {"type": "object"}}
        ], "nextCursor": "p2"}));
        assert!(matches!(got, ServerResult::CustomResult(_)), "{got:?}");
        let page = read_page::<McpTool>("up", got).unwrap();
        let names: Vec<&str> = page.items.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["add", "say"]);
        assert_eq!(page.next_cursor.as_deref(), Some("p2"));
    }

    #[test]
    fn a_list_that_fits_is_read_whole() {
        let got = answer(json!({"prompts": [{"name": "a"}, {"name": "b", "arguments": []}]}));
        assert!(matches!(got, ServerResult::ListPromptsResult(_)), "{got:?}");
        let page = read_page::<Prompt>("up", got).unwrap();
        assert_eq!(page.items.len(), 2);
        assert_eq!(page.next_cursor, None);
    }

    #[test]
    fn an_answer_without_the_list_or_with_a_bad_cursor_says_so() {
        for (v, why) in [
            (json!({"prompts": []}), "no \"tools\" array"),
            (json!({"tools": {"a": 1}}), "no \"tools\" array"),
            (json!({"tools": [], "nextCursor": 5}), "not a string"),
        ] {
            let got = ServerResult::CustomResult(CustomResult(v));
            let e = read_page::<McpTool>("up", got).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
        let got = answer(json!({"resourceTemplates": [
            {"uriTemplate": "x://{a}", "name": "a"},
            {"name": "no template"}
        ]}));
        let page = read_page::<ResourceTemplate>("up", got).unwrap();
        assert_eq!(page.items.len(), 1);
    }
}
