//! The idempotency ledger over a call's canonical effect ([`Tool::effect`]): a tool whose
//! arguments name their content by handle (as a mail draft does), a new handle on every
//! lookup. Calls that would deliver the same thing share one derived key, whatever handles
//! they name, and an explicit key sent with another effect is a conflict. Deliveries are
//! counted by a real HTTP server on 127.0.0.1.

use super::*;
use parking_lot::Mutex;
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use toolgate_test_support::counting::{request, CountingServer};

/// Notes by handle; every `put` gives a new handle, even for the same text.
#[derive(Default)]
struct Notes(Mutex<HashMap<String, String>>);

impl Notes {
    fn put(&self, text: &str) -> String {
        let mut g = self.0.lock();
        let id = format!("note_{}", g.len());
        g.insert(id.clone(), text.to_string());
        id
    }
}

#[derive(Deserialize, JsonSchema)]
struct PostArgs {
    to: String,
    note: String,
}

#[derive(Serialize, JsonSchema)]
struct PostOut {
    key: String,
    count: u32,
}

/// Delivers a note, named by its handle, to the counting server.
struct PostNote {
    addr: SocketAddr,
    notes: Arc<Notes>,
}

impl TypedTool for PostNote {
    type Args = PostArgs;
    type Output = PostOut;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("post_note")
            .description("Delivers a note by handle.")
            .effects(Effects {
                read_only: false,
                destructive: false,
                idempotent: false,
                open_world: true,
                concurrency_safe: true,
            })
            .risk(Risk::External)
    }

    fn effect(&self, args: &PostArgs, _ctx: &ToolContext) -> Result<Option<Value>, ToolError> {
        let text = self
            .notes
            .0
            .lock()
            .get(&args.note)
            .cloned()
            .ok_or_else(|| {
                ToolError::invalid_input(format!("no note has the handle {:?}", args.note))
                    .with_reason("unknown_handle")
            })?;
        Ok(Some(json!({"to": args.to, "text": text})))
    }

    async fn call(&self, _args: PostArgs, ctx: ToolContext) -> Result<PostOut, ToolError> {
        let key = ctx.idempotency_key().unwrap_or_default().to_string();
        let (addr, k) = (self.addr, key.clone());
        let answer = tokio::task::spawn_blocking(move || request(addr, "POST", "/send", Some(&k)))
            .await
            .map_err(|e| ToolError::internal(e.to_string()))?
            .map_err(|e| ToolError::failed(e.to_string()))?;
        Ok(PostOut {
            key,
            count: answer.1,
        })
    }
}

fn setup() -> (Pipeline, CountingServer, Arc<Notes>) {
    let server = CountingServer::start();
    let notes = Arc::new(Notes::default());
    let tool = PostNote {
        addr: server.addr(),
        notes: notes.clone(),
    };
    let p = Pipeline::builder(Registry::builder().tool(tool).build().unwrap())
        .ledger(Arc::new(MemoryLedger::default()))
        .build();
    (p, server, notes)
}

async fn post(p: &Pipeline, s: &Session, id: &str, note: &str, key: Option<&str>) -> ToolResult {
    let mut call = ToolCall::new(id, "post_note", json!({"to": "ops", "note": note}));
    if let Some(k) = key {
        call = call.with_idempotency_key(k);
    }
    p.dispatch(call, s).await
}

#[tokio::test]
async fn calls_with_other_handles_for_the_same_effect_share_one_derived_key() {
    let (p, server, notes) = setup();
    let s = p.session("s1").build().unwrap();
    let first = post(&p, &s, "1", &notes.put("the report is ready"), None).await;
    assert!(!first.is_error, "{first:?}");
    // the flow run again: a new handle for the same text is the same call to the ledger
    let again = post(&p, &s, "2", &notes.put("the report is ready"), None).await;
    assert!(again.replayed, "{again:?}");
    assert_eq!(again.structured_content, first.structured_content);
    assert_eq!(server.deliveries(), 1);
    // another text is another effect: it is delivered, under another key
    let other = post(&p, &s, "3", &notes.put("the report is late"), None).await;
    assert!(!other.is_error && !other.replayed, "{other:?}");
    assert_ne!(
        other.structured_content.as_ref().unwrap()["key"],
        first.structured_content.as_ref().unwrap()["key"]
    );
    assert_eq!(server.deliveries(), 2);
    // a handle the hook cannot resolve ends the call before the ledger is asked
    let bad = post(&p, &s, "4", "note_99", None).await;
    assert_eq!(err(&bad).reason.as_deref(), Some("unknown_handle"));
    assert_eq!(server.deliveries(), 2);
}

#[tokio::test]
async fn an_explicit_key_is_checked_against_the_effect_not_the_handles() {
    let (p, server, notes) = setup();
    let s = p.session("s1").build().unwrap();
    let first = post(&p, &s, "1", &notes.put("hello"), Some("K-1")).await;
    assert!(!first.is_error, "{first:?}");
    let same = post(&p, &s, "2", &notes.put("hello"), Some("K-1")).await;
    assert!(same.replayed, "{same:?}");
    let other = post(&p, &s, "3", &notes.put("goodbye"), Some("K-1")).await;
    assert_eq!(err(&other).reason.as_deref(), Some("idempotency_conflict"));
    assert_eq!(server.deliveries(), 1);
}
