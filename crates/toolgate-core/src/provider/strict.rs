//! OpenAI's strict mode (Structured Outputs, "Supported schemas"): a tool's input schema
//! rewritten into the subset strict mode accepts, every change a [`Warning`].
//!
//! Per schema object, in this order:
//!
//! 1. `oneOf` becomes `anyOf` (strict mode has no `oneOf`; the pipeline still checks that
//!    exactly one branch holds); an `allOf` of one schema is merged into its parent (the
//!    `properties` and `required` of both united), a longer one dropped. A `$ref` beside
//!    other keywords (after that merge) is replaced by its definition, merged the same way;
//!    a `$ref` alone is kept when it names a root definition (`#/$defs/NAME`, or draft 7's
//!    `#/definitions/NAME`, sent as `$defs`) or the root (`#`).
//! 2. a `type` list with more than one type besides `null` becomes an `anyOf` of one branch
//!    per type, each with the keywords of its type.
//! 3. objects: every property is required; one that was optional is made nullable (`"type":
//!    [T, "null"]`, or a `{"type": "null"}` branch), and a `null` sent for it means "left
//!    out" ([`NullPaths`]); `additionalProperties: false` everywhere.
//! 4. arrays: `prefixItems` (a tuple) becomes `items` with an `anyOf` of the position schemas
//!    (each once) and `minItems`/`maxItems` of its length.
//! 5. keywords strict mode does not support are removed: `default`, `minLength`,
//!    `maxLength`, `patternProperties`, `propertyNames`, `minProperties`, `maxProperties`,
//!    `unevaluatedProperties`, `unevaluatedItems`, `contains`, `minContains`, `maxContains`,
//!    `uniqueItems`, `not`, `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`, a
//!    `format` other than the ones listed in [`FORMATS`], and any keyword JSON Schema does not
//!    define. A removed constraint is added to the description (`(maxLength: 64)`), so the
//!    model still reads it; the pipeline enforces the tool's own schema whatever the model
//!    was shown. `$schema`, `$id` and `$comment` go without a warning: they constrain nothing.
//!
//! What strict mode cannot express without refusing arguments the tool accepts makes the tool
//! [`Unstrictable`]: a value of any type (`{}`, `true`), an object whose keys are not all
//! declared (a map: no `properties`, `additionalProperties` other than `false`, or
//! `patternProperties`), a `$ref` strict mode cannot follow (an anchor, an `$id`, a pointer
//! elsewhere than a root definition: every reference sent resolves in the schema sent), objects
//! nested more than [`MAX_DEPTH`] deep, more than [`MAX_PROPERTIES`] properties or
//! [`MAX_ENUM_VALUES`] enum values in all. The export then sends that tool with
//! `"strict": false` and its schema as it is, with a warning saying why.

use super::conjunct::{definition_name, merge, root_definitions, Definitions};
use super::nulls::{NullPaths, NullTree};
use crate::import::Warning;
use crate::schema::escape_pointer;
use serde_json::{json, Map, Value};

/// String formats strict mode supports.
pub const FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Object nesting strict mode allows.
pub const MAX_DEPTH: usize = 10;
/// Properties strict mode allows in one schema, in all.
pub const MAX_PROPERTIES: usize = 5000;
/// Enum values strict mode allows in one schema, in all.
pub const MAX_ENUM_VALUES: usize = 1000;

/// Why a schema cannot be made strict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unstrictable {
    /// JSON pointer into the tool's input schema.
    pub pointer: String,
    /// What strict mode cannot say.
    pub message: String,
}

/// A schema made strict.
#[derive(Debug, Clone, PartialEq)]
pub struct StrictSchema {
    /// The schema to send.
    pub schema: Value,
    /// Where a `null` the model sends means "left out".
    pub nulls: NullPaths,
}

/// Rewrites `schema` (an input schema, root `"type": "object"`) for strict mode; warning
/// pointers are into `schema`.
///
/// # Errors
/// [`Unstrictable`] for what strict mode cannot express (see the module documentation).
pub fn strict_schema(
    schema: &Value,
    warnings: &mut Vec<Warning>,
) -> Result<StrictSchema, Unstrictable> {
    let root_defs = definitions(schema)?;
    let mut w = Walker {
        root_defs: root_defs.clone(),
        inlined: 0,
        warnings: Vec::new(),
        properties: 0,
        enum_values: 0,
        defs: Default::default(),
    };
    let (mut out, root) = w.node(schema, "", 0)?;
    if let Some(defs) = &root_defs {
        let mut converted = Map::new();
        for (name, (def, at)) in defs {
            let (v, tree) = w.node(def, at, 0)?;
            converted.insert(name.clone(), v);
            w.defs.insert(name.clone(), tree);
        }
        out.as_object_mut()
            .expect("an object root")
            .insert("$defs".into(), Value::Object(converted));
    }
    if w.properties > MAX_PROPERTIES {
        return Err(unstrictable(
            "",
            format!(
                "{} properties in all; strict mode allows {MAX_PROPERTIES}",
                w.properties
            ),
        ));
    }
    if w.enum_values > MAX_ENUM_VALUES {
        return Err(unstrictable(
            "",
            format!(
                "{} enum values in all; strict mode allows {MAX_ENUM_VALUES}",
                w.enum_values
            ),
        ));
    }
    warnings.append(&mut w.warnings);
    Ok(StrictSchema {
        schema: out,
        nulls: NullPaths { root, defs: w.defs },
    })
}

/// The root's definitions ([`root_definitions`]), a name both define refused.
fn definitions(schema: &Value) -> Result<Option<Definitions>, Unstrictable> {
    root_definitions(schema).map_err(|name| {
        unstrictable(
            &format!("/definitions/{}", escape_pointer(&name)),
            format!(
                "{name:?} is defined in both $defs and definitions; strict mode sends one $defs"
            ),
        )
    })
}

fn unstrictable(pointer: &str, message: impl Into<String>) -> Unstrictable {
    Unstrictable {
        pointer: pointer.to_string(),
        message: message.into(),
    }
}

/// Keywords strict mode keeps on any schema.
const COMMON: [&str; 6] = ["description", "title", "enum", "const", "anyOf", "$ref"];
/// Keywords that constrain nothing, removed without a warning.
const SILENT: [&str; 5] = ["$schema", "$id", "$comment", "$defs", "definitions"];
/// Constraints strict mode cannot carry: removed, and told in the description.
const TOLD: [&str; 19] = [
    "default",
    "minLength",
    "maxLength",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
];

struct Walker {
    /// The root's definitions, for a `$ref` that must be inlined or checked.
    root_defs: Option<Definitions>,
    /// References being inlined, one inside another.
    inlined: usize,
    warnings: Vec<Warning>,
    properties: usize,
    enum_values: usize,
    defs: std::collections::BTreeMap<String, NullTree>,
}

fn child(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", escape_pointer(token))
}

impl Walker {
    fn warn(&mut self, pointer: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(Warning::new(pointer, message));
    }

    fn node(
        &mut self,
        schema: &Value,
        at: &str,
        depth: usize,
    ) -> Result<(Value, NullTree), Unstrictable> {
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(true) => {
                return Err(unstrictable(
                    at,
                    "a schema of `true` accepts any value; strict mode needs a type",
                ))
            }
            _ => {
                return Err(unstrictable(
                    at,
                    "a schema that accepts nothing cannot be sent in strict mode",
                ))
            }
        };
        let mut map = map.clone();
        // first: a one-schema allOf merged here may bring a $ref beside other keywords
        self.composition(&mut map, at);
        if map.len() > 1 && map.contains_key("$ref") {
            return self.inline(map, at, depth);
        }
        let types = type_names(&map);
        let non_null: Vec<&str> = types.iter().copied().filter(|t| *t != "null").collect();
        if non_null.len() > 1 {
            return self.split_types(&map, &non_null, types.contains(&"null"), at, depth);
        }
        if types.is_empty()
            && !["anyOf", "$ref", "enum", "const"]
                .iter()
                .any(|k| map.contains_key(*k))
        {
            return Err(unstrictable(
                at,
                "a value of any type; strict mode needs a type (export without strict mode to let the model send any value)",
            ));
        }
        let ty = non_null.first().copied();
        let mut out = Map::new();
        let mut tree = NullTree::default();
        let mut notes: Vec<String> = Vec::new();
        for (key, value) in &map {
            let kat = child(at, key);
            match key.as_str() {
                "type" => {
                    out.insert(key.clone(), value.clone());
                }
                "enum" => {
                    self.enum_values += value.as_array().map_or(0, Vec::len);
                    out.insert(key.clone(), value.clone());
                }
                "anyOf" => {
                    let mut branches = Vec::new();
                    for (i, b) in value.as_array().into_iter().flatten().enumerate() {
                        let (v, t) = self.node(b, &child(&kat, &i.to_string()), depth)?;
                        branches.push(v);
                        tree.merge(t);
                    }
                    out.insert(key.clone(), Value::Array(branches));
                }
                "$ref" => {
                    let target = value.as_str().unwrap_or_default();
                    if target == "#" {
                        out.insert(key.clone(), value.clone());
                        continue;
                    }
                    let name = definition_name(target)
                        .filter(|n| self.root_defs.as_ref().is_some_and(|d| d.contains_key(n)));
                    let Some(name) = name else {
                        return Err(unstrictable(
                            &kat,
                            format!("$ref {value} names no definition of this schema's root; strict mode follows only #/$defs/NAME and #"),
                        ));
                    };
                    out.insert(
                        key.clone(),
                        Value::String(format!("#/$defs/{}", escape_pointer(&name))),
                    );
                    tree.refs.push(name);
                }
                k if COMMON.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if SILENT.contains(&k) => {}
                "pattern" if ty == Some("string") => {
                    out.insert(key.clone(), value.clone());
                }
                "format" if ty == Some("string") => {
                    if value.as_str().is_some_and(|f| FORMATS.contains(&f)) {
                        out.insert(key.clone(), value.clone());
                    } else {
                        self.warn(&kat, format!("format {value} is not one strict mode supports; removed and told in the description"));
                        notes.push(format!("format: {value}"));
                    }
                }
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf"
                    if matches!(ty, Some("number" | "integer")) =>
                {
                    out.insert(key.clone(), value.clone());
                }
                "minItems" | "maxItems" if ty == Some("array") => {
                    out.insert(key.clone(), value.clone());
                }
                "items" | "prefixItems" | "properties" | "required" | "additionalProperties"
                    if matches!(ty, Some("array" | "object")) => {}
                "default" if value.is_null() => {
                    self.warn(&kat, "default is not supported in strict mode; removed (null is how the model leaves the argument out)");
                }
                k if TOLD.contains(&k) => {
                    self.warn(&kat, format!("{k} is not supported in strict mode; removed and told in the description"));
                    notes.push(format!("{k}: {}", short(value)));
                }
                k => {
                    self.warn(
                        &kat,
                        format!("{k} is not supported in strict mode; removed"),
                    );
                }
            }
        }
        match ty {
            Some("object") => self.object(&map, at, depth, &mut out, &mut tree)?,
            Some("array") => self.array(&map, at, depth, &mut out, &mut tree)?,
            _ => {}
        }
        if !notes.is_empty() {
            // by keyword, whatever the map's order
            notes.sort();
            let note = format!("({})", notes.join(", "));
            let description = match out.get("description").and_then(Value::as_str) {
                Some(d) if !d.is_empty() => format!("{d} {note}"),
                _ => note,
            };
            out.insert("description".into(), Value::String(description));
        }
        Ok((Value::Object(out), tree))
    }

    /// A `$ref` with keywords beside it, which strict mode refuses: the definition inlined,
    /// the keywords beside the reference taking precedence (as OpenAI's SDK does).
    fn inline(
        &mut self,
        mut map: Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<(Value, NullTree), Unstrictable> {
        let target = map.remove("$ref").unwrap_or_default();
        let def = target
            .as_str()
            .and_then(definition_name)
            .and_then(|name| self.root_defs.as_ref()?.get(&name))
            .and_then(|(def, _)| def.as_object())
            .cloned();
        let Some(def) = def else {
            return Err(unstrictable(
                &child(at, "$ref"),
                format!("$ref {target} beside other keywords names no definition of this schema"),
            ));
        };
        if self.inlined >= 8 {
            return Err(unstrictable(
                at,
                "a recursive definition referenced beside other keywords",
            ));
        }
        self.warn(child(at, "$ref"), format!("$ref {target} beside other keywords; the definition inlined (strict mode takes a $ref alone)"));
        merge(&mut map, &def);
        self.inlined += 1;
        let out = self.node(&Value::Object(map), at, depth);
        self.inlined -= 1;
        out
    }

    /// `oneOf` as `anyOf`; `allOf` of one schema merged, of more dropped.
    fn composition(&mut self, map: &mut Map<String, Value>, at: &str) {
        if let Some(one_of) = map.remove("oneOf") {
            if map.contains_key("anyOf") {
                // both must hold: the anyOf is sent, the pipeline checks the oneOf
                self.warn(child(at, "oneOf"), "oneOf is not supported in strict mode; removed beside the anyOf (toolgate still checks it)");
            } else {
                self.warn(child(at, "oneOf"), "oneOf is not supported in strict mode; sent as anyOf (toolgate still checks that exactly one branch holds)");
                map.insert("anyOf".into(), one_of);
            }
        }
        if let Some(all_of) = map.remove("allOf") {
            let at = child(at, "allOf");
            match all_of.as_array().map(Vec::as_slice) {
                Some([Value::Object(only)]) => {
                    self.warn(at, "allOf is not supported in strict mode; its one schema merged into this one");
                    merge(map, only);
                }
                _ => self.warn(
                    at,
                    "allOf is not supported in strict mode; removed (toolgate still checks it)",
                ),
            }
        }
    }

    /// One `anyOf` branch per type.
    fn split_types(
        &mut self,
        map: &Map<String, Value>,
        types: &[&str],
        nullable: bool,
        at: &str,
        depth: usize,
    ) -> Result<(Value, NullTree), Unstrictable> {
        self.warn(
            child(at, "type"),
            format!("a list of types {types:?}; sent as anyOf with one branch per type"),
        );
        let mut branches = Vec::new();
        let mut tree = NullTree::default();
        for ty in types {
            let mut sub = map.clone();
            sub.remove("description");
            sub.remove("title");
            sub.insert("type".into(), Value::String((*ty).to_string()));
            let (v, t) = self.node(&Value::Object(sub), at, depth)?;
            branches.push(v);
            tree.merge(t);
        }
        if nullable {
            branches.push(json!({"type": "null"}));
        }
        let mut out = Map::new();
        for k in ["description", "title"] {
            if let Some(v) = map.get(k) {
                out.insert(k.into(), v.clone());
            }
        }
        out.insert("anyOf".into(), Value::Array(branches));
        Ok((Value::Object(out), tree))
    }

    fn object(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        depth: usize,
        out: &mut Map<String, Value>,
        tree: &mut NullTree,
    ) -> Result<(), Unstrictable> {
        if depth >= MAX_DEPTH {
            return Err(unstrictable(
                at,
                format!(
                    "objects nested more than {MAX_DEPTH} deep; strict mode allows {MAX_DEPTH}"
                ),
            ));
        }
        let properties = map.get("properties").and_then(Value::as_object);
        if map
            .get("patternProperties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty())
        {
            return Err(unstrictable(
                &child(at, "patternProperties"),
                "an object that takes keys by pattern (patternProperties); strict mode needs every key declared",
            ));
        }
        match map.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            None if properties.is_some() => {
                self.warn(at, "object sent with additionalProperties: false (strict mode needs it on every object)");
            }
            _ => {
                return Err(unstrictable(
                    at,
                    "an object that takes keys it does not declare (a map); strict mode needs every key declared",
                ))
            }
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut props = Map::new();
        let mut names = Vec::new();
        let props_at = child(at, "properties");
        for (name, sub) in properties.into_iter().flatten() {
            self.properties += 1;
            let sub_at = child(&props_at, name);
            let (mut v, t) = self.node(sub, &sub_at, depth + 1)?;
            let mut strip = false;
            if !required.contains(&name.as_str()) {
                self.warn(&sub_at, "optional: made required and nullable (strict mode); a null the model sends is taken as left out");
                strip = !admits_null(sub);
                v = nullable(v);
            }
            tree.properties.insert(name.clone(), (strip, t));
            names.push(Value::String(name.clone()));
            props.insert(name.clone(), v);
        }
        out.insert("properties".into(), Value::Object(props));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
        Ok(())
    }

    fn array(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        depth: usize,
        out: &mut Map<String, Value>,
        tree: &mut NullTree,
    ) -> Result<(), Unstrictable> {
        if let Some(prefix) = map.get("prefixItems").and_then(Value::as_array) {
            let pat = child(at, "prefixItems");
            let mut branches: Vec<Value> = Vec::new();
            let mut items_tree = NullTree::default();
            for (i, p) in prefix.iter().enumerate() {
                let (v, t) = self.node(p, &child(&pat, &i.to_string()), depth)?;
                items_tree.merge(t);
                if !branches.contains(&v) {
                    branches.push(v);
                }
            }
            let closed = map.get("items") == Some(&Value::Bool(false));
            self.warn(pat, "prefixItems (a tuple) is not supported in strict mode; sent as items of any of its position types (toolgate still checks each position)");
            let items = match branches.len() {
                1 => branches.pop().expect("one branch"),
                _ => json!({"anyOf": branches}),
            };
            out.insert("items".into(), items);
            out.entry("minItems").or_insert_with(|| prefix.len().into());
            if closed {
                out.entry("maxItems").or_insert_with(|| prefix.len().into());
            }
            tree.items = Some(Box::new(items_tree));
            return Ok(());
        }
        match map.get("items") {
            Some(items @ Value::Object(_)) => {
                let (v, t) = self.node(items, &child(at, "items"), depth)?;
                out.insert("items".into(), v);
                tree.items = Some(Box::new(t));
                Ok(())
            }
            _ => Err(unstrictable(
                at,
                "an array whose items may be of any type; strict mode needs an item schema",
            )),
        }
    }
}

/// The type names of a schema object (`type` as a string or a list).
fn type_names(map: &Map<String, Value>) -> Vec<&str> {
    match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether a schema (as the tool wrote it) accepts `null`.
fn admits_null(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    if map.contains_key("type") {
        return type_names(map).contains(&"null");
    }
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        return values.contains(&Value::Null);
    }
    if let Some(c) = map.get("const") {
        return c.is_null();
    }
    ["anyOf", "oneOf"].iter().any(|k| {
        map.get(*k)
            .and_then(Value::as_array)
            .is_some_and(|bs| bs.iter().any(admits_null))
    })
}

/// `schema` (strict already) accepting `null` too.
fn nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        if !branches
            .iter()
            .any(|b| b.get("type") == Some(&json!("null")))
        {
            branches.push(json!({"type": "null"}));
        }
        return Value::Object(map);
    }
    match map.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = t.clone();
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::String(_)) => {}
        Some(Value::Array(ts)) => {
            if !ts.contains(&json!("null")) {
                ts.push(json!("null"));
            }
        }
        _ => {
            let mut outer = Map::new();
            if let Some(d) = map.remove("description") {
                outer.insert("description".into(), d);
            }
            outer.insert(
                "anyOf".into(),
                json!([Value::Object(map), {"type": "null"}]),
            );
            return Value::Object(outer);
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
    Value::Object(map)
}

/// A value for a description note, cut at 60 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
#[path = "strict_tests.rs"]
mod tests;
