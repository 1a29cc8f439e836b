//! The registry swapped while the pipeline serves: sessions made before keep working, calls
//! resolve against the registry of the moment, watchers see the generation go up.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate_test_support::tools::destructive;

#[tokio::test]
async fn a_swapped_registry_serves_the_next_call_of_an_existing_session() {
    let (p, _) = echo_pipeline();
    let s = p.session("s").profile("default").build().unwrap();
    let mut changes = p.registry_changes();
    assert_eq!(*changes.borrow_and_update(), 0);
    let r = p
        .dispatch(ToolCall::new("c1", "delete_all", json!({})), &s)
        .await;
    assert_eq!(err(&r).kind, ErrorKind::UnknownTool);

    let next = Registry::builder()
        .tool(Echo::default())
        .tool(destructive(std::sync::Arc::default()))
        .build()
        .unwrap();
    p.replace_registry(next).unwrap();
    assert!(changes.has_changed().unwrap());
    assert_eq!(*changes.borrow_and_update(), 1);
    let names: Vec<String> = p
        .registry()
        .list(Some("default"))
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["delete_all", "echo"]);
    // known now: it gets as far as the policy (destructive asks, nobody to ask)
    let r = p
        .dispatch(ToolCall::new("c2", "delete_all", json!({})), &s)
        .await;
    assert_eq!(err(&r).kind, ErrorKind::ApprovalRejected);
    let r = p
        .dispatch(ToolCall::new("c3", "echo", json!({"text": "x"})), &s)
        .await;
    assert!(!r.is_error, "{r:?}");
}

#[tokio::test]
async fn a_registry_with_other_profiles_is_refused() {
    let (p, _) = echo_pipeline();
    let other = Registry::builder()
        .tool(Echo::default())
        .profile(Profile::new("extra").all())
        .build()
        .unwrap();
    let e = p.replace_registry(other).unwrap_err();
    assert!(e.to_string().contains("profiles"), "{e}");
    assert_eq!(*p.registry_changes().borrow(), 0);
}
