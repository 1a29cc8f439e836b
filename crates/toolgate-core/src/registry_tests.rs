use super::*;
use crate::spec::Effects;
use crate::{DynamicTool, ToolOutput};
use serde_json::json;

fn tool(name: &str, effects: Effects, tags: &[&str]) -> DynamicTool {
    let mut b = ToolSpec::builder(name).effects(effects);
    for t in tags {
        b = b.tag(*t);
    }
    DynamicTool::new(b.build().unwrap(), |_, _| async {
        Ok(ToolOutput::text(""))
    })
}

fn names(specs: Vec<&ToolSpec>) -> Vec<String> {
    specs.iter().map(|s| s.name.to_string()).collect()
}

fn sample() -> Registry {
    Registry::builder()
        .tool(tool("read", Effects::read_only(), &["fs"]))
        .tool(tool("write", Effects::side_effecting(), &["fs"]))
        .tool(tool(
            "fetch",
            Effects {
                open_world: true,
                ..Effects::read_only()
            },
            &["net"],
        ))
        .profile(Profile::new("fs-only").tag("fs"))
        .profile(
            Profile::new("local-read")
                .read_only()
                .exclude(Selector::Name("fetch".into())),
        )
        .build()
        .unwrap()
}

#[test]
fn listing_is_sorted_and_filtered_by_profile() {
    let r = sample();
    assert_eq!(names(r.list(None).unwrap()), ["fetch", "read", "write"]);
    assert_eq!(
        names(r.list(Some("default")).unwrap()),
        ["fetch", "read", "write"]
    );
    // the built-in explore profile keeps to the workspace: no open_world tool
    assert_eq!(names(r.list(Some("explore")).unwrap()), ["read"]);
    assert_eq!(names(r.list(Some("fs-only")).unwrap()), ["read", "write"]);
    assert_eq!(names(r.list(Some("local-read")).unwrap()), ["read"]);
    assert!(r.list(Some("nope")).is_err());
}

#[test]
fn filter_by_tag_and_effect() {
    let r = sample();
    assert_eq!(
        names(r.filter(&Selector::Tag("fs".into()))),
        ["read", "write"]
    );
    assert_eq!(names(r.filter(&Selector::ReadOnly)), ["fetch", "read"]);
    assert_eq!(names(r.filter(&Selector::ClosedWorld)), ["read", "write"]);
    assert_eq!(
        names(r.filter(&Selector::NotDestructive)),
        ["fetch", "read"]
    );
}

#[test]
fn invalid_schemas_are_registration_errors_with_pointers() {
    let spec = ToolSpec::builder("broken")
        .input_schema(
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}}),
        )
        .build()
        .unwrap();
    // a schema not derived from Rust types is checked at registration, deferral or not
    for defer in [false, true] {
        let err = Registry::builder()
            .defer_derived_schemas(defer)
            .tool(DynamicTool::new(spec.clone(), |_, _| async {
                Ok(ToolOutput::text(""))
            }))
            .build()
            .unwrap_err();
        invalid_at_n(err);
    }
}

fn invalid_at_n(err: RegistrationError) {
    match err {
        RegistrationError::InvalidSchema {
            tool,
            which,
            pointer,
            ..
        } => {
            assert_eq!((tool.as_str(), which), ("broken", "inputSchema"));
            assert!(pointer.starts_with("/properties/n"), "{pointer}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn duplicate_profiles_and_too_many_profiles_are_refused() {
    assert!(Registry::builder()
        .profile(Profile::new("a").all())
        .profile(Profile::new("a").all())
        .build()
        .is_err());
    let mut b = Registry::builder();
    for i in 0..MAX_PROFILES {
        b = b.profile(Profile::new(format!("p{i}")).all());
    }
    assert!(b.build().is_err());
}

#[test]
fn versions_compare_numerically() {
    use std::cmp::Ordering::*;
    assert_eq!(compare_versions("1.10.0", "1.9.0"), Greater);
    assert_eq!(compare_versions("2", "2.0"), Less);
    assert_eq!(compare_versions("1.0.0", "1.0.0"), Equal);
    assert_eq!(compare_versions("1.0.0-beta", "1.0.0-alpha"), Greater);
}
