//! Where a `null` in a provider's arguments means "left out".
//!
//! OpenAI's strict mode makes every property required, so an optional property becomes
//! nullable and the model sends `null` for "not given". The tool's own schema does not
//! accept that `null`; [`NullPaths::strip`] removes such members before the call is
//! dispatched, so the pipeline checks the arguments the tool declared. Only properties that
//! were optional *and* did not accept `null` are stripped: a `null` the tool's schema allows is
//! passed on as sent.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// How deep [`NullPaths::strip`] follows `$ref`s into definitions (each level is one
/// reference followed).
const MAX_REF_DEPTH: usize = 32;

/// The strippable `null`s of one schema node and what is below it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NullTree {
    /// Properties by name: whether a `null` there means "left out", and the tree below.
    pub(crate) properties: BTreeMap<String, (bool, NullTree)>,
    /// The tree of array items.
    pub(crate) items: Option<Box<NullTree>>,
    /// Definitions (`#/$defs/NAME`) the node refers to.
    pub(crate) refs: Vec<String>,
}

impl NullTree {
    /// Whether nothing below this node is ever stripped.
    pub fn is_empty(&self) -> bool {
        self.refs.is_empty()
            && self.items.as_ref().is_none_or(|i| i.is_empty())
            && self
                .properties
                .values()
                .all(|(strip, sub)| !strip && sub.is_empty())
    }

    /// Adds everything `other` strips (for the branches of an `anyOf`).
    pub(crate) fn merge(&mut self, other: NullTree) {
        for (name, (strip, sub)) in other.properties {
            let entry = self.properties.entry(name).or_default();
            entry.0 |= strip;
            entry.1.merge(sub);
        }
        if let Some(items) = other.items {
            match &mut self.items {
                Some(mine) => mine.merge(*items),
                None => self.items = Some(items),
            }
        }
        for r in other.refs {
            if !self.refs.contains(&r) {
                self.refs.push(r);
            }
        }
    }
}

/// The strippable `null`s of a whole schema: the root's tree and its definitions'.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NullPaths {
    pub(crate) root: NullTree,
    pub(crate) defs: BTreeMap<String, NullTree>,
}

impl NullPaths {
    /// Whether no `null` is ever stripped.
    pub fn is_empty(&self) -> bool {
        self.root.is_empty() && self.defs.values().all(NullTree::is_empty)
    }

    /// Removes every member of `arguments` whose `null` means "left out". Values of other
    /// shapes are left as they are (the decode stage reports them).
    pub fn strip(&self, arguments: &mut Value) {
        self.strip_at(&self.root, arguments, 0);
    }

    fn strip_at(&self, tree: &NullTree, value: &mut Value, depth: usize) {
        if depth > MAX_REF_DEPTH {
            return;
        }
        for name in &tree.refs {
            if let Some(def) = self.defs.get(name) {
                self.strip_at(def, value, depth + 1);
            }
        }
        match value {
            Value::Object(map) => self.strip_object(tree, map, depth),
            Value::Array(items) => {
                if let Some(sub) = &tree.items {
                    for item in items {
                        self.strip_at(sub, item, depth);
                    }
                }
            }
            _ => {}
        }
    }

    fn strip_object(&self, tree: &NullTree, map: &mut Map<String, Value>, depth: usize) {
        for (name, (strip, sub)) in &tree.properties {
            if *strip && map.get(name).is_some_and(Value::is_null) {
                map.remove(name);
            } else if let Some(v) = map.get_mut(name) {
                self.strip_at(sub, v, depth);
            }
        }
    }
}
