use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::cell::RefCell;

/// Shortens `v` to `max`, keeping the full text in `stored`.
fn cut(v: Value, max: usize, stored: &RefCell<Option<String>>) -> Result<Shortened, Value> {
    shorten(v, max, |text| {
        *stored.borrow_mut() = Some(text);
        Ok("res_0123456789abcdef0123456789abcdef".into())
    })
    .unwrap()
}

/// The one-line item that begins at `offset` of a full text.
fn item_at(full: &str, offset: u64) -> Value {
    let line = full[offset as usize..].lines().next().unwrap();
    serde_json::from_str(line.trim_end_matches(',')).unwrap()
}

fn listing(n: usize) -> Value {
    let entries: Vec<Value> = (0..n)
        .map(|i| json!({"name": format!("file_with_a_long_name_{i:05}.txt"), "kind": "file", "size": i}))
        .collect();
    json!({"path": ".", "entries": entries, "total_entries": n, "truncated": false})
}

#[test]
fn a_long_list_loses_its_last_items_and_says_where_they_are() {
    let v = listing(1200);
    let stored = RefCell::new(None);
    let s = cut(v.clone(), 65536, &stored).unwrap();
    let text = s.value.to_string();
    assert!(text.len() <= 65536, "{}", text.len());
    assert_eq!(s.truncation.shown_bytes, text.len());
    let entries = s.value["entries"].as_array().unwrap();
    assert!(
        entries.len() > 500 && entries.len() < 1200,
        "{}",
        entries.len()
    );
    assert_eq!(
        entries[..],
        v["entries"].as_array().unwrap()[..entries.len()]
    );
    for key in ["path", "total_entries", "truncated"] {
        assert_eq!(s.value[key], v[key], "{key} is kept");
    }
    let o = &s.truncation.omitted;
    assert_eq!(o.len(), 1);
    assert_eq!(
        (o[0].pointer.as_str(), o[0].unit),
        ("/entries", OmissionUnit::Items)
    );
    assert_eq!((o[0].shown, o[0].total), (entries.len() as u64, 1200));
    // the full text is the whole value, and the offset is where the first item left out is
    let full = stored.borrow().clone().unwrap();
    assert_eq!(serde_json::from_str::<Value>(&full).unwrap(), v);
    assert_eq!(s.truncation.original_bytes, full.len());
    assert_eq!(
        item_at(&full, o[0].offset),
        v["entries"][entries.len()],
        "the offset is where the first item left out begins"
    );
    assert_eq!(
        s.value["truncation"],
        serde_json::to_value(&s.truncation).unwrap()
    );
    assert!(
        s.truncation.message.contains("/entries shows"),
        "{}",
        s.truncation.message
    );
    assert!(s
        .truncation
        .message
        .contains(&format!("\"offset\":{}", o[0].offset)));
}

#[test]
fn a_long_string_keeps_its_start_and_end_with_a_marker() {
    let content: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    let v = json!({"path": "f", "content": content, "lines": 20_000});
    let stored = RefCell::new(None);
    let s = cut(v, 4096, &stored).unwrap();
    assert!(s.value.to_string().len() <= 4096);
    let shown = s.value["content"].as_str().unwrap();
    assert!(shown.starts_with("line 0\nline 1\n"));
    assert!(shown.ends_with("line 19999\n"));
    let o = &s.truncation.omitted[0];
    assert_eq!(
        (o.pointer.as_str(), o.unit),
        ("/content", OmissionUnit::Bytes)
    );
    assert!(shown.contains(&format!(
        "read_result {{\"handle\":\"res_0123456789abcdef0123456789abcdef\",\"offset\":{}}}",
        o.offset
    )));
    // reading on from the offset gives the escaped text right after the shown head
    let head_len = shown.find("\n[... ").unwrap();
    let full = stored.borrow().clone().unwrap();
    let escaped_next = serde_json::to_string(&content[head_len..head_len + 40]).unwrap();
    assert!(full[o.offset as usize..].starts_with(&escaped_next[1..escaped_next.len() - 1]));
    let tail = shown.split_once(" ...]\n").unwrap().1;
    assert_eq!(
        (o.shown as usize, o.total as usize),
        (head_len + tail.len(), content.len())
    );
}

#[test]
fn inside_a_one_item_list_the_string_is_cut() {
    let v = json!({"files": [{"name": "a", "text": "x".repeat(50_000)}, {"name": "b", "text": "y".repeat(50_000)}]});
    let stored = RefCell::new(None);
    let s = cut(v, 8192, &stored).unwrap();
    assert!(s.value.to_string().len() <= 8192);
    let pointers: Vec<&str> = s
        .truncation
        .omitted
        .iter()
        .map(|o| o.pointer.as_str())
        .collect();
    assert_eq!(pointers, ["/files", "/files/0/text"]);
    assert_eq!(s.value["files"].as_array().unwrap().len(), 1);
    assert!(s.value["files"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("xxx"));
}

#[test]
fn objects_lose_members_only_when_nothing_else_can_give() {
    let members: serde_json::Map<String, Value> = (0..3000)
        .map(|i| (format!("key{i:04}"), json!(i)))
        .collect();
    let v = json!({"small": [1, 2], "map": members});
    let stored = RefCell::new(None);
    let s = cut(v, 4096, &stored).unwrap();
    assert!(s.value.to_string().len() <= 4096);
    assert_eq!(s.value["small"], json!([1, 2]));
    let o = &s.truncation.omitted[0];
    assert_eq!(
        (o.pointer.as_str(), o.unit),
        ("/map", OmissionUnit::Members)
    );
    assert!(s.value["map"]["key0000"] == json!(0));
}

#[test]
fn what_cannot_be_shortened_is_given_back_untouched() {
    let stored = RefCell::new(None);
    for v in [
        json!(["not", "an", "object"]),
        json!({"truncation": 1, "list": (0..5000).collect::<Vec<_>>()}),
        // many small members of the root: dropping them would still be over a tiny cap
        json!({"a": "x".repeat(10_000)}),
    ] {
        let back = cut(v.clone(), 256, &stored).unwrap_err();
        assert_eq!(back, v);
    }
    assert!(
        stored.borrow().is_none(),
        "nothing is stored for a value given back"
    );
}

#[test]
fn a_long_handle_is_planned_for() {
    let v = listing(1200);
    let handle = format!("res_{}", "f".repeat(200));
    let s = shorten(v, 65536, |_| Ok(handle.clone())).unwrap().unwrap();
    assert!(s.value.to_string().len() <= 65536);
    assert_eq!(s.truncation.handle, handle);
}

#[test]
fn a_store_failure_is_the_callers_error() {
    let e = shorten(listing(1200), 65536, |_| {
        Err(ToolError::internal("disk full"))
    })
    .unwrap_err();
    assert_eq!(e.kind, crate::ErrorKind::Internal);
}

/// Values of many shapes and sizes, cut to many limits: either given back whole or within
/// the limit, every kept item equal to the original's, and the full text the whole value.
#[test]
fn every_shortened_value_fits_and_keeps_a_prefix() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    fn gen(next: &mut dyn FnMut(u64) -> u64, depth: u32) -> Value {
        match next(if depth > 2 { 3 } else { 6 }) {
            0 => json!(next(1_000_000)),
            1 => Value::String("é\"\n".repeat(next(400) as usize)),
            2 => json!(null),
            3 | 4 => Value::Array((0..next(40)).map(|_| gen(next, depth + 1)).collect()),
            _ => Value::Object(
                (0..next(12))
                    .map(|i| (format!("k{i}"), gen(next, depth + 1)))
                    .collect(),
            ),
        }
    }
    let mut fitted = 0;
    for round in 0..150 {
        let mut v = gen(&mut next, 0);
        if !v.is_object() {
            v = json!({ "v": v });
        }
        let max = 256 + next(20_000) as usize;
        let stored = RefCell::new(None);
        match cut(v.clone(), max, &stored) {
            Err(back) => assert_eq!(back, v, "round {round}"),
            Ok(s) => {
                fitted += 1;
                assert!(
                    s.value.to_string().len() <= max,
                    "round {round}: {} > {max}",
                    s.value.to_string().len()
                );
                let full = stored.borrow().clone().unwrap();
                assert_eq!(
                    serde_json::from_str::<Value>(&full).unwrap(),
                    v,
                    "round {round}"
                );
                for o in &s.truncation.omitted {
                    assert!(
                        o.shown < o.total || o.unit == OmissionUnit::Bytes,
                        "round {round}"
                    );
                    assert!(o.offset as usize <= full.len(), "round {round}");
                }
            }
        }
    }
    assert!(fitted > 50, "{fitted}");
}
