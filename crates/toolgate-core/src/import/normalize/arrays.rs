//! Arrays: draft 4-7 tuple forms and BFCL's `tuple` rewritten with 2020-12's `prefixItems`.
//!
//! - `items: [A, B]` becomes `prefixItems: [A, B]`; `additionalItems: C` then becomes
//!   `items: C`.
//! - a `tuple` with item types `[A, B]` is a fixed-length array: `prefixItems: [A, B]`,
//!   `items: false`, `minItems: 2`.
//! - a `tuple` with one item schema (`items: {"type": "float"}`) is an array of those items.
//! - an array form of a type name (`String[]`) gets the element type as `items`, unless the
//!   schema gives `items` itself.

use super::{Place, Types, Walker};
use crate::import::error::ImportError;
use crate::import::warning::child;
use serde_json::{Map, Value};

impl Walker<'_> {
    pub(super) fn arrays(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
        depth: usize,
        types: &Types,
        out: &mut Map<String, Value>,
    ) -> Result<(), ImportError> {
        let items_at = child(pointer, "items");
        let extra_at = child(pointer, "additionalItems");
        match map.get("items") {
            None => {
                if let Some(items) = &types.items {
                    out.insert("items".into(), items.clone());
                }
            }
            Some(Value::Array(list)) => {
                return self.item_list(list, map, pointer, depth, types, out)
            }
            Some(items) => {
                out.insert(
                    "items".into(),
                    self.schema(items, &items_at, depth + 1, Place::Other)?,
                );
            }
        }
        if map.contains_key("additionalItems") {
            self.warn(
                extra_at,
                "additionalItems without an array of items has no effect; dropped",
            );
        }
        Ok(())
    }

    /// `items` given as an array of schemas, one for each position.
    fn item_list(
        &mut self,
        list: &[Value],
        map: &Map<String, Value>,
        pointer: &str,
        depth: usize,
        types: &Types,
        out: &mut Map<String, Value>,
    ) -> Result<(), ImportError> {
        let items_at = child(pointer, "items");
        let extra_at = child(pointer, "additionalItems");
        if map.contains_key("prefixItems") || list.is_empty() {
            self.warn(items_at, "items as an array beside prefixItems, or empty, has no meaning in 2020-12; dropped");
            if map.contains_key("additionalItems") {
                self.warn(
                    extra_at,
                    "additionalItems without an array of items has no effect; dropped",
                );
            }
            return Ok(());
        }
        let mut prefix = Vec::with_capacity(list.len());
        for (i, sub) in list.iter().enumerate() {
            prefix.push(self.schema(
                sub,
                &child(&items_at, &i.to_string()),
                depth + 1,
                Place::Other,
            )?);
        }
        out.insert("prefixItems".into(), Value::Array(prefix));
        self.warn(
            &items_at,
            "items as an array (one schema for each position) rewritten as prefixItems",
        );
        match map.get("additionalItems") {
            Some(extra) => {
                out.insert(
                    "items".into(),
                    self.schema(extra, &extra_at, depth + 1, Place::Other)?,
                );
                self.warn(extra_at, "additionalItems rewritten as items (2020-12)");
            }
            None if types.tuple => {
                out.insert("items".into(), Value::Bool(false));
                if !out.contains_key("minItems") {
                    out.insert("minItems".into(), list.len().into());
                }
                self.warn(
                    child(pointer, "type"),
                    format!("a tuple of {} item types has exactly that many items: items false, minItems {}", list.len(), list.len()),
                );
            }
            None => {}
        }
        Ok(())
    }
}
