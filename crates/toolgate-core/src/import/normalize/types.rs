//! Type names of foreign dialects mapped onto JSON Schema's seven types.
//!
//! The seven JSON Schema names (`string`, `integer`, `number`, `boolean`, `array`, `object`,
//! `null`) are kept. Other names are looked up case-insensitively: Python (`float`, `dict`,
//! `tuple`, `list`, `str`, `int`, `bool`, `None`), Java (`String`, `Integer`, `long`,
//! `double`, `char`, `HashMap`, `ArrayList`, ...), JavaScript (`Boolean`, `Number`, `Array`,
//! `Object`) and BFCL's `any`. Array forms `T[]` and generic forms `List<T>` become arrays
//! whose items are `T` when `T` maps. Anything else is unknown: no type constraint, and the
//! caller warns.

use serde_json::{json, Value};

/// What a type name means in JSON Schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TypeName {
    /// One of JSON Schema's seven names, written exactly so.
    Standard(&'static str),
    /// A foreign name for a JSON Schema type.
    Foreign {
        /// The JSON Schema type.
        json: &'static str,
        /// A Python tuple: a fixed-length array.
        tuple: bool,
        /// The item schema of an array form (`int[]`, `List<String>`).
        items: Option<Value>,
    },
    /// A name for "any value" (`any`, `Any`, `mixed`): no type constraint.
    Any,
    /// A name with no known meaning.
    Unknown,
}

const STANDARD: [&str; 7] = [
    "string", "integer", "number", "boolean", "array", "object", "null",
];

/// How deep `int[][]` or `List<List<int>>` may nest before the name counts as unknown.
const MAX_NESTING: usize = 8;

/// The meaning of the type name `name`.
pub(crate) fn map_type_name(name: &str) -> TypeName {
    if let Some(s) = STANDARD.iter().find(|s| **s == name) {
        return TypeName::Standard(s);
    }
    map_foreign(name.trim(), 0)
}

fn map_foreign(name: &str, depth: usize) -> TypeName {
    if depth > MAX_NESTING {
        return TypeName::Unknown;
    }
    if let Some(element) = name.strip_suffix("[]") {
        return array_of(element.trim(), depth);
    }
    if let Some((base, rest)) = name.split_once('<') {
        let Some(args) = rest.strip_suffix('>') else {
            return TypeName::Unknown;
        };
        return match (lookup(base.trim()), top_level_args(args).as_slice()) {
            (
                Some(TypeName::Foreign {
                    json: "array",
                    tuple,
                    ..
                }),
                [element],
            ) => match array_of(element, depth) {
                TypeName::Foreign { items, .. } => TypeName::Foreign {
                    json: "array",
                    tuple,
                    items,
                },
                other => other,
            },
            (Some(found), _) => found,
            (None, _) => TypeName::Unknown,
        };
    }
    lookup(name).unwrap_or(TypeName::Unknown)
}

fn array_of(element: &str, depth: usize) -> TypeName {
    let items = match map_foreign(element, depth + 1) {
        TypeName::Standard(t) => Some(json!({ "type": t })),
        TypeName::Foreign { json, items, .. } => Some(match items {
            Some(items) => json!({ "type": json, "items": items }),
            None => json!({ "type": json }),
        }),
        TypeName::Any => None,
        TypeName::Unknown if element.is_empty() => None,
        TypeName::Unknown => return TypeName::Unknown,
    };
    TypeName::Foreign {
        json: "array",
        tuple: false,
        items,
    }
}

/// Splits `K, V` at commas outside angle brackets.
fn top_level_args(args: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in args.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(args[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(args[start..].trim());
    out
}

fn lookup(name: &str) -> Option<TypeName> {
    let lower = name.to_ascii_lowercase();
    let foreign = |json| {
        Some(TypeName::Foreign {
            json,
            tuple: false,
            items: None,
        })
    };
    match lower.as_str() {
        "string" | "str" | "char" | "character" | "charsequence" | "text" => foreign("string"),
        "integer" | "int" | "long" | "short" | "byte" | "bigint" | "biginteger" | "int8"
        | "int16" | "int32" | "int64" | "uint" | "uint8" | "uint16" | "uint32" | "uint64" => {
            foreign("integer")
        }
        "number" | "float" | "double" | "decimal" | "bigdecimal" | "real" | "float32"
        | "float64" => foreign("number"),
        "boolean" | "bool" => foreign("boolean"),
        "array" | "list" | "arraylist" | "linkedlist" | "vector" | "set" | "hashset"
        | "treeset" | "collection" | "iterable" | "sequence" => foreign("array"),
        "tuple" => Some(TypeName::Foreign {
            json: "array",
            tuple: true,
            items: None,
        }),
        "object" | "dict" | "dictionary" | "map" | "hashmap" | "treemap" | "linkedhashmap"
        | "hashtable" | "record" | "properties" | "jsonobject" => foreign("object"),
        "null" | "none" | "nonetype" => foreign("null"),
        "any" | "anytype" | "mixed" => Some(TypeName::Any),
        _ => None,
    }
}

/// Whether `value` is an instance of JSON Schema type `ty` (2020-12: an integer is a number
/// with no fractional part, so `5.0` is an integer).
pub(crate) fn fits_type(value: &Value, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "integer" => is_integer(value),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64()
                || n.is_u64()
                || n.as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        _ => false,
    }
}

/// JSON Schema equality (`enum`, `const`): numbers compare by value (`1 == 1.0`), objects
/// ignore key order. Values nested deeper than 128 levels compare unequal.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    json_equal_at(a, b, 0)
}

fn json_equal_at(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > 128 {
        return false;
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal_at(x, y, depth + 1))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal_at(v, w, depth + 1)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn foreign(json: &'static str) -> TypeName {
        TypeName::Foreign {
            json,
            tuple: false,
            items: None,
        }
    }

    #[test]
    fn standard_names_are_kept() {
        for t in STANDARD {
            assert_eq!(map_type_name(t), TypeName::Standard(t));
        }
    }

    #[test]
    fn python_java_and_javascript_names_map() {
        for (name, json) in [
            ("dict", "object"),
            ("float", "number"),
            ("String", "string"),
            ("Boolean", "boolean"),
            ("HashMap", "object"),
            ("ArrayList", "array"),
            ("Array", "array"),
            ("long", "integer"),
            ("double", "number"),
            ("char", "string"),
            ("byte", "integer"),
            ("short", "integer"),
            ("Object", "object"),
            ("INTEGER", "integer"),
            ("NoneType", "null"),
        ] {
            assert_eq!(map_type_name(name), foreign(json), "{name}");
        }
        assert_eq!(
            map_type_name("tuple"),
            TypeName::Foreign {
                json: "array",
                tuple: true,
                items: None
            }
        );
        assert_eq!(map_type_name("any"), TypeName::Any);
    }

    #[test]
    fn array_and_generic_forms_carry_items() {
        let array = |items: Value| TypeName::Foreign {
            json: "array",
            tuple: false,
            items: Some(items),
        };
        assert_eq!(map_type_name("String[]"), array(json!({"type": "string"})));
        assert_eq!(
            map_type_name("List<Integer>"),
            array(json!({"type": "integer"}))
        );
        assert_eq!(
            map_type_name("int[][]"),
            array(json!({"type": "array", "items": {"type": "integer"}}))
        );
        assert_eq!(
            map_type_name("Map<String, List<Integer>>"),
            foreign("object")
        );
        assert_eq!(
            map_type_name("any[]"),
            TypeName::Foreign {
                json: "array",
                tuple: false,
                items: None
            }
        );
        assert_eq!(
            map_type_name(&format!("int{}", "[]".repeat(20))),
            TypeName::Unknown
        );
    }

    #[test]
    fn unknown_names_are_unknown() {
        for name in ["", "strin", "Function", "List<", "Widget[]", "Foo<Bar>"] {
            assert_eq!(map_type_name(name), TypeName::Unknown, "{name:?}");
        }
    }

    #[test]
    fn integers_follow_2020_12() {
        assert!(fits_type(&json!(5.0), "integer"));
        assert!(!fits_type(&json!(5.5), "integer"));
        assert!(fits_type(&json!(5), "number"));
        assert!(!fits_type(&json!("5"), "number"));
        assert!(json_equal(&json!([1, {"a": 2.0}]), &json!([1.0, {"a": 2}])));
        assert!(!json_equal(&json!(1), &json!("1")));
    }
}
