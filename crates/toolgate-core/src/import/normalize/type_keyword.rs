//! The `type` keyword: foreign names mapped (see [`types`](super::types)), `any` and unknown
//! names dropped, type lists mapped name by name, and OpenAPI's `nullable` folded in.

use super::types::{map_type_name, TypeName};
use super::{Types, Walker};
use crate::import::error::kind;
use crate::import::warning::child;
use serde_json::{Map, Value};

impl Walker<'_> {
    /// Reads `type` (and `nullable`).
    pub(super) fn types(&mut self, map: &Map<String, Value>, at: &str, pointer: &str) -> Types {
        let mut types = match map.get("type") {
            None => Types::default(),
            Some(Value::String(name)) => self.type_name(name, at),
            Some(Value::Array(names)) => self.type_list(names, at),
            Some(other) => {
                self.warn(
                    at,
                    format!("type must be a string or an array of strings, found {}; dropped (no type constraint)", kind(other)),
                );
                Types::default()
            }
        };
        match map.get("nullable") {
            None => {}
            Some(Value::Bool(true)) => {
                if let Some(names) = types.names.as_mut().filter(|n| !n.contains(&"null")) {
                    names.push("null");
                }
                self.warn(
                    child(pointer, "nullable"),
                    "nullable (OpenAPI) is not JSON Schema; folded into type as \"null\"",
                );
            }
            Some(_) => self.warn(
                child(pointer, "nullable"),
                "nullable (OpenAPI) is not JSON Schema; dropped",
            ),
        }
        types
    }

    fn type_name(&mut self, name: &str, at: &str) -> Types {
        match map_type_name(name) {
            TypeName::Standard(t) => Types {
                names: Some(vec![t]),
                ..Types::default()
            },
            TypeName::Foreign { json, tuple, items } => {
                self.warn(
                    at,
                    format!("type {name:?} is not a JSON Schema type; mapped to {json:?}"),
                );
                Types {
                    names: Some(vec![json]),
                    tuple,
                    items,
                }
            }
            TypeName::Any => {
                self.warn(
                    at,
                    format!("type {name:?} means any value; dropped (no type constraint)"),
                );
                Types::default()
            }
            TypeName::Unknown => {
                self.warn(
                    at,
                    format!("unknown type name {name:?}; dropped (no type constraint)"),
                );
                Types::default()
            }
        }
    }

    fn type_list(&mut self, names: &[Value], at: &str) -> Types {
        let mut out: Vec<&'static str> = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let mapped = match name.as_str().map(map_type_name) {
                Some(TypeName::Standard(t)) => t,
                Some(TypeName::Foreign { json, .. }) => {
                    self.warn(
                        child(at, &i.to_string()),
                        format!("type {name} is not a JSON Schema type; mapped to {json:?}"),
                    );
                    json
                }
                _ => {
                    self.warn(
                        child(at, &i.to_string()),
                        format!("type {name} means any value or is unknown; the whole type dropped (no type constraint)"),
                    );
                    return Types::default();
                }
            };
            if out.contains(&mapped) {
                self.warn(
                    child(at, &i.to_string()),
                    format!("type {mapped:?} repeated; dropped"),
                );
            } else {
                out.push(mapped);
            }
        }
        if out.is_empty() {
            self.warn(
                at,
                "an empty type list allows nothing; dropped (no type constraint)",
            );
            return Types::default();
        }
        Types {
            names: Some(out),
            ..Types::default()
        }
    }
}
