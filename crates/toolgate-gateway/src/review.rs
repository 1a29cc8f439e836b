//! What the operator reviews: a pin's state and reason (`toolgate upstream list`), and the
//! change a blocked tool waits on as a unified diff of its pretty-printed definitions
//! (`toolgate upstream diff`), every invisible or bidirectional character made visible.

use crate::definition::pretty;
use crate::quarantine::visible;
use toolgate_store::Pin;

/// A unified diff (3 lines of context) from the accepted definition to the one seen, with
/// invisible characters escaped; for a tool never accepted, the whole seen definition as
/// added lines. Empty when the tool is served as accepted.
pub fn diff(pin: &Pin) -> String {
    if pin.is_served() {
        return String::new();
    }
    let old = pin
        .pinned_definition
        .as_deref()
        .map(|d| visible(&pretty(d)))
        .unwrap_or_default();
    let new = visible(&pretty(&pin.seen_definition));
    let header_old = match &pin.pinned_hash {
        Some(h) => format!(
            "{}/{} pinned {}",
            pin.upstream,
            pin.tool,
            &h[..h.len().min(12)]
        ),
        None => "/dev/null".to_string(),
    };
    let header_new = format!(
        "{}/{} seen {}",
        pin.upstream,
        pin.tool,
        &pin.seen_hash[..pin.seen_hash.len().min(12)]
    );
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(&header_old, &header_new)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_store::PinState;

    #[test]
    fn the_diff_shows_the_change_with_invisible_characters_visible() {
        let pin = Pin {
            upstream: "u".into(),
            tool: "add".into(),
            state: PinState::Changed,
            pinned_hash: Some("a".repeat(64)),
            pinned_definition: Some(r#"{"description":"Adds.","name":"add"}"#.into()),
            seen_hash: "b".repeat(64),
            seen_definition:
                r#"{"description":"Adds.\u200b<IMPORTANT>x</IMPORTANT>","name":"add"}"#.into(),
            reason: None,
            first_seen_us: 0,
            updated_us: 0,
            approved_us: None,
        };
        let d = diff(&pin);
        assert!(d.contains("--- u/add pinned aaaaaaaaaaaa"), "{d}");
        assert!(d.contains("-  \"description\": \"Adds.\","), "{d}");
        assert!(
            d.contains("+  \"description\": \"Adds.\\u{200b}<IMPORTANT>"),
            "{d}"
        );
    }
}
