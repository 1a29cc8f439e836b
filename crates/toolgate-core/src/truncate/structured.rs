//! Shortening structured content to a byte limit, inside the value.
//!
//! The sequence ([`shorten`]):
//!
//! 1. the size of every node's compact JSON is measured once, into an arena;
//! 2. while the value (with room for its `truncation` record) is over the limit, the largest
//!    node that can give bytes gives them: an array of two or more items drops items from its
//!    end (keeping at least one), a string longer than [`MIN_STRING`] bytes loses its middle
//!    (keeping its start and its end, with a marker); an object drops members from its end
//!    (the one with the most members first) only when no array or string can give any more.
//!    An ancestor is always larger than its descendants, so a list loses items before
//!    anything inside an item is cut; an array or object that would save less than its entry
//!    in the record costs is not cut;
//! 3. the full value is rendered as text (`render.rs`) with the offset of each first part left
//!    out, and stored by the caller behind a handle;
//! 4. the cuts are applied in place, each string's marker naming the handle and offset, and
//!    the record is added at the root as [`TRUNCATION_PROPERTY`].

use super::render::{render, Mark};
use super::TRUNCATION_PROPERTY;
use crate::error::ToolError;
use crate::result::{Omission, OmissionUnit, Truncation};
use crate::results::{ceil_char_boundary, floor_char_boundary};
use serde_json::Value;

/// A string is cut only when longer than this many bytes, and keeps at least this many.
pub const MIN_STRING: usize = 256;
/// Room kept for a handle in the markers and the record while planning, in bytes; a longer
/// handle plans again.
const HANDLE_ROOM: usize = 64;
/// About what one omission costs in the record, besides its pointer: an array or object
/// that could give less is not cut.
const OMISSION_ROOM: usize = 130;

/// A step of a path into a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// A member of an object.
    Key(String),
    /// An item of an array.
    Index(usize),
}

/// A structured value cut to its limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Shortened {
    /// The shortened value, its [`TRUNCATION_PROPERTY`] member included.
    pub value: Value,
    /// The record (also in `value`).
    pub truncation: Truncation,
}

/// Shortens `value` (an object: see the module docs) so that its compact JSON, record
/// included, is at most `max_bytes`; `keep` stores the full value's text (given to it) and
/// returns its handle. Gives the value back untouched when it is not an object, already has a
/// [`TRUNCATION_PROPERTY`] member, or cannot be made to fit; the caller then falls back.
/// Nothing is stored then, unless the store's handles are longer than 64 bytes and it is only
/// with such a handle that the value cannot fit.
///
/// # Errors
/// The error of `keep`.
pub fn shorten(
    value: Value,
    max_bytes: usize,
    keep: impl FnOnce(String) -> Result<String, ToolError>,
) -> Result<Result<Shortened, Value>, ToolError> {
    if value
        .as_object()
        .is_none_or(|o| o.contains_key(TRUNCATION_PROPERTY))
    {
        return Ok(Err(value));
    }
    let Some(plan) = Plan::make(&value, max_bytes, HANDLE_ROOM) else {
        return Ok(Err(value));
    };
    let (full, mut offsets) = render(&value, &plan.marks());
    let original_bytes = full.len();
    let handle = keep(full)?;
    let plan = if handle.len() > HANDLE_ROOM {
        // a store with long handles: plan with their length, find the offsets again
        let Some(plan) = Plan::make(&value, max_bytes, handle.len()) else {
            return Ok(Err(value));
        };
        offsets = render(&value, &plan.marks()).1;
        plan
    } else {
        plan
    };
    Ok(Ok(plan.apply(
        value,
        &handle,
        &offsets,
        original_bytes,
        max_bytes,
    )))
}

/// One cut: where, and how much is kept.
#[derive(Debug, Clone)]
struct Cut {
    path: Vec<Step>,
    kind: CutKind,
}

#[derive(Debug, Clone, Copy)]
enum CutKind {
    /// The first `keep` of `total` items.
    Items { keep: usize, total: usize },
    /// The first `keep` of `total` members, in the object's order.
    Members { keep: usize, total: usize },
    /// Bytes `..head` and `tail..` of a string of `total` bytes.
    Bytes {
        head: usize,
        tail: usize,
        total: usize,
    },
}

impl Cut {
    /// The item, member or byte where what is left out begins.
    fn first_left_out(&self) -> usize {
        match self.kind {
            CutKind::Items { keep, .. } | CutKind::Members { keep, .. } => keep,
            CutKind::Bytes { head, .. } => head,
        }
    }
}

/// One node of the value, in an arena in document order.
struct Node {
    /// Compact JSON bytes, as cut so far.
    size: usize,
    parent: Option<usize>,
    /// The step from the parent.
    step: Option<Step>,
    /// Its position among its parent's items or members.
    pos: usize,
    /// A bound on the length of its JSON pointer once written in the record.
    ptr_len: usize,
    kind: Kind,
}

enum Kind {
    Leaf,
    Str {
        text_len: usize,
        cut: Option<(usize, usize)>,
    },
    List {
        children: Vec<usize>,
        keep: usize,
    },
    Map {
        children: Vec<usize>,
        keep: usize,
    },
}

struct Plan {
    cuts: Vec<Cut>,
}

impl Plan {
    /// Where the renderer must find each cut's first part left out.
    fn marks(&self) -> Vec<Mark<'_>> {
        self.cuts
            .iter()
            .map(|c| Mark {
                path: &c.path,
                index: c.first_left_out(),
            })
            .collect()
    }

    /// The cuts that bring `value` within `max_bytes`, markers and record sized for a handle
    /// of `handle_len` bytes; `None` when no cut is left and it is still over.
    fn make(value: &Value, max_bytes: usize, handle_len: usize) -> Option<Plan> {
        let mut arena = Vec::new();
        build(value, None, None, 0, &mut arena);
        let marker = marker_room(handle_len);
        let (base, per_cut) = record_room(&arena, handle_len);
        let mut candidates = Candidates::new(&arena, marker);
        // the record lists each node cut once, however often it gave
        let mut cut = vec![false; arena.len()];
        let mut record = base;
        loop {
            let over = (arena[0].size + record).saturating_sub(max_bytes);
            if over == 0 {
                break;
            }
            let pick = candidates.pop(&arena, marker)?;
            let listed = if cut[pick] { 0 } else { per_cut };
            let gave = give(&mut arena, pick, over + listed, marker, value);
            if gave == 0 {
                continue;
            }
            if !cut[pick] {
                cut[pick] = true;
                record += per_cut;
            }
            let mut at = Some(pick);
            while let Some(i) = at {
                arena[i].size -= gave;
                at = arena[i].parent;
            }
            candidates.push(&arena, pick, marker);
        }
        Some(Plan {
            cuts: collect_cuts(&arena),
        })
    }

    /// Applies the cuts to `value` and adds the record.
    fn apply(
        self,
        mut value: Value,
        handle: &str,
        offsets: &[usize],
        original_bytes: usize,
        max_bytes: usize,
    ) -> Shortened {
        let mut omitted = Vec::with_capacity(self.cuts.len());
        for (cut, &offset) in self.cuts.iter().zip(offsets) {
            let Some(node) = walk(&mut value, &cut.path) else {
                continue;
            };
            let (unit, shown, total) = match (cut.kind, node) {
                (CutKind::Items { keep, total }, Value::Array(items)) => {
                    items.truncate(keep);
                    (OmissionUnit::Items, keep, total)
                }
                (CutKind::Members { keep, total }, Value::Object(members)) => {
                    let drop: Vec<String> = members.keys().skip(keep).cloned().collect();
                    // last first: with serde_json's `preserve_order` a removal swaps the last
                    // member into the hole, which keeps the order only when it is the last
                    for k in drop.iter().rev() {
                        members.remove(k);
                    }
                    (OmissionUnit::Members, keep, total)
                }
                (CutKind::Bytes { head, tail, total }, Value::String(s)) => {
                    let left_out = tail - head;
                    let mut cut = String::with_capacity(head + (total - tail) + 160);
                    cut.push_str(&s[..head]);
                    cut.push_str(&string_marker(left_out, total, handle, offset));
                    cut.push_str(&s[tail..]);
                    *s = cut;
                    (OmissionUnit::Bytes, head + total - tail, total)
                }
                _ => continue,
            };
            omitted.push(Omission {
                pointer: pointer(&cut.path),
                unit,
                shown: shown as u64,
                total: total as u64,
                offset: offset as u64,
            });
        }
        let mut truncation = Truncation {
            original_bytes,
            shown_bytes: 0,
            handle: handle.to_string(),
            message: message(&omitted, max_bytes, original_bytes, handle),
            omitted,
        };
        // what is shown counts the record too, whose size depends on that count's digits:
        // the body, `,"truncation":` and the record
        let body = super::super::pipeline::finish::json_len(&value) + TRUNCATION_PROPERTY.len() + 4;
        for _ in 0..3 {
            let record = serde_json::to_string(&truncation).map_or(0, |r| r.len());
            truncation.shown_bytes = body + record;
        }
        if let Value::Object(root) = &mut value {
            root.insert(
                TRUNCATION_PROPERTY.into(),
                serde_json::to_value(&truncation).unwrap_or(Value::Null),
            );
        }
        Shortened { value, truncation }
    }
}

/// Adds `v` and its descendants to the arena (document order); returns its index.
fn build(
    v: &Value,
    parent: Option<usize>,
    step: Option<Step>,
    pos: usize,
    arena: &mut Vec<Node>,
) -> usize {
    let me = arena.len();
    let ptr_len = parent.map_or(0, |p| arena[p].ptr_len)
        + match &step {
            // a pointer token escapes `~` and `/`, then the record escapes it as JSON
            Some(Step::Key(k)) => 1 + 2 * super::escaped_len(k),
            Some(Step::Index(i)) => 1 + i.to_string().len(),
            None => 0,
        };
    arena.push(Node {
        size: 0,
        parent,
        step,
        pos,
        ptr_len,
        kind: Kind::Leaf,
    });
    let (size, kind) = match v {
        Value::String(s) => (
            super::escaped_len(s) + 2,
            Kind::Str {
                text_len: s.len(),
                cut: None,
            },
        ),
        Value::Array(items) => {
            let mut size = 1 + items.len().max(1);
            let children: Vec<usize> = items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let c = build(item, Some(me), Some(Step::Index(i)), i, arena);
                    size += arena[c].size;
                    c
                })
                .collect();
            let keep = children.len();
            (size, Kind::List { children, keep })
        }
        Value::Object(members) => {
            let mut size = 1 + members.len().max(1);
            let children: Vec<usize> = members
                .iter()
                .enumerate()
                .map(|(i, (k, item))| {
                    let c = build(item, Some(me), Some(Step::Key(k.clone())), i, arena);
                    size += super::escaped_len(k) + 3 + arena[c].size;
                    c
                })
                .collect();
            let keep = children.len();
            (size, Kind::Map { children, keep })
        }
        other => (other.to_string().len(), Kind::Leaf),
    };
    arena[me].size = size;
    arena[me].kind = kind;
    me
}

/// The nodes that can still give bytes, largest first: arrays and strings, and objects
/// (those with the most members first) only when none of those is left. Keys go stale as
/// sizes shrink; a stale entry is put back with its current key when it comes up.
struct Candidates {
    first: std::collections::BinaryHeap<(usize, usize)>,
    last: std::collections::BinaryHeap<((usize, usize), usize)>,
}

impl Candidates {
    fn new(arena: &[Node], marker: usize) -> Candidates {
        let mut c = Candidates {
            first: Default::default(),
            last: Default::default(),
        };
        for i in 0..arena.len() {
            c.push(arena, i, marker);
        }
        c
    }

    /// Puts node `i` back (or in) when it can still give.
    fn push(&mut self, arena: &[Node], i: usize, marker: usize) {
        match key(arena, i, marker) {
            Some(Key::First(k)) => self.first.push((k, i)),
            Some(Key::Last(k)) => self.last.push((k, i)),
            None => {}
        }
    }

    /// The node that gives next, `None` when none can.
    fn pop(&mut self, arena: &[Node], marker: usize) -> Option<usize> {
        while let Some((k, i)) = self.first.pop() {
            match key(arena, i, marker) {
                Some(Key::First(now)) if now == k && !dropped(arena, i) => return Some(i),
                Some(Key::First(now)) if !dropped(arena, i) => self.first.push((now, i)),
                _ => {}
            }
        }
        while let Some((k, i)) = self.last.pop() {
            match key(arena, i, marker) {
                Some(Key::Last(now)) if now == k && !dropped(arena, i) => return Some(i),
                Some(Key::Last(now)) if !dropped(arena, i) => self.last.push((now, i)),
                _ => {}
            }
        }
        None
    }
}

enum Key {
    /// An array or a string, by size.
    First(usize),
    /// An object, by members kept and size.
    Last((usize, usize)),
}

/// How node `i` ranks as a candidate now; `None` when it cannot give, or (not cut yet) could
/// give less than its entry in the record would cost.
fn key(arena: &[Node], i: usize, marker: usize) -> Option<Key> {
    let n = &arena[i];
    let worth = |children: &[usize], keep: usize| {
        keep < children.len() || n.size > arena[children[0]].size + 2 + OMISSION_ROOM
    };
    match &n.kind {
        Kind::List { keep, children } if *keep >= 2 && worth(children, *keep) => {
            Some(Key::First(n.size))
        }
        Kind::Str {
            text_len,
            cut: None,
        } if *text_len > MIN_STRING + marker => Some(Key::First(n.size)),
        Kind::Str {
            text_len,
            cut: Some((head, tail)),
        } if head + text_len - tail > MIN_STRING + 16 => Some(Key::First(n.size)),
        Kind::Map { keep, children } if *keep >= 2 && worth(children, *keep) => {
            Some(Key::Last((*keep, n.size)))
        }
        _ => None,
    }
}

/// Whether node `i` lies inside an item or member that was dropped.
fn dropped(arena: &[Node], mut i: usize) -> bool {
    while let Some(p) = arena[i].parent {
        if !kept(arena, p, i) {
            return true;
        }
        i = p;
    }
    false
}

/// Whether child `c` of `p` is still kept.
fn kept(arena: &[Node], p: usize, c: usize) -> bool {
    match &arena[p].kind {
        Kind::List { keep, .. } | Kind::Map { keep, .. } => arena[c].pos < *keep,
        _ => true,
    }
}

/// Makes node `i` give at least `over` bytes if it can (as much as it can otherwise); returns
/// how many it gave.
fn give(arena: &mut [Node], i: usize, over: usize, marker: usize, root: &Value) -> usize {
    match &arena[i].kind {
        Kind::List { .. } | Kind::Map { .. } => give_items(arena, i, over),
        Kind::Str { .. } => give_bytes(arena, i, over, marker, root),
        Kind::Leaf => 0,
    }
}

/// An array or object drops items or members from its end, keeping one.
fn give_items(arena: &mut [Node], i: usize, over: usize) -> usize {
    let (Kind::List { children, keep } | Kind::Map { children, keep }) = &arena[i].kind else {
        return 0;
    };
    let mut keep = *keep;
    let mut gave = 0;
    while keep > 1 && gave < over {
        keep -= 1;
        let c = children[keep];
        // the item (and its key) and the comma before it
        gave += arena[c].size + member_overhead(arena, c) + 1;
    }
    if let Kind::List { keep: k, .. } | Kind::Map { keep: k, .. } = &mut arena[i].kind {
        *k = keep;
    }
    gave
}

/// A string loses its middle: `over` bytes (and its marker's, the first time), keeping at
/// least [`MIN_STRING`].
fn give_bytes(arena: &mut [Node], i: usize, over: usize, marker: usize, root: &Value) -> usize {
    let Some(Value::String(s)) = walk_ref(root, &path_of(arena, i)) else {
        return 0;
    };
    let Kind::Str { cut, .. } = &arena[i].kind else {
        return 0;
    };
    let total = s.len();
    // a string cut before already carries its marker
    let (kept, before, new_marker) = match *cut {
        None => (total, super::escaped_len(s), marker),
        Some((head, tail)) => (head + total - tail, arena[i].size - 2, 0),
    };
    let keep_bytes = kept
        .saturating_sub(over + new_marker)
        .max(MIN_STRING)
        .min(kept);
    let head = floor_char_boundary(s, keep_bytes / 2);
    let tail = ceil_char_boundary(s, total - (keep_bytes - head));
    if tail <= head {
        return 0;
    }
    let after = super::escaped_len(&s[..head]) + marker + super::escaped_len(&s[tail..]);
    if after >= before {
        return 0;
    }
    if let Kind::Str { cut, .. } = &mut arena[i].kind {
        *cut = Some((head, tail));
    }
    before - after
}

/// Bytes a child costs its parent besides its own: an object member's key, quotes and colon.
fn member_overhead(arena: &[Node], c: usize) -> usize {
    match &arena[c].step {
        Some(Step::Key(k)) => super::escaped_len(k) + 3,
        _ => 0,
    }
}

/// The path from the root to node `i`.
fn path_of(arena: &[Node], mut i: usize) -> Vec<Step> {
    let mut path = Vec::new();
    while let (Some(p), Some(step)) = (arena[i].parent, &arena[i].step) {
        path.push(step.clone());
        i = p;
    }
    path.reverse();
    path
}

/// The cuts of the arena, in document order, leaving out those inside dropped parts.
fn collect_cuts(arena: &[Node]) -> Vec<Cut> {
    let mut cuts = Vec::new();
    let mut dropped = vec![false; arena.len()];
    for (i, n) in arena.iter().enumerate() {
        if let Some(p) = n.parent {
            dropped[i] = dropped[p] || !kept(arena, p, i);
        }
        if dropped[i] {
            continue;
        }
        let kind = match &n.kind {
            Kind::List { children, keep } if *keep < children.len() => CutKind::Items {
                keep: *keep,
                total: children.len(),
            },
            Kind::Map { children, keep } if *keep < children.len() => CutKind::Members {
                keep: *keep,
                total: children.len(),
            },
            Kind::Str {
                text_len,
                cut: Some((head, tail)),
            } => CutKind::Bytes {
                head: *head,
                tail: *tail,
                total: *text_len,
            },
            _ => continue,
        };
        cuts.push(Cut {
            path: path_of(arena, i),
            kind,
        });
    }
    cuts
}

fn walk<'v>(mut v: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    for step in path {
        v = match (step, v) {
            (Step::Key(k), Value::Object(o)) => o.get_mut(k)?,
            (Step::Index(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

fn walk_ref<'v>(mut v: &'v Value, path: &[Step]) -> Option<&'v Value> {
    for step in path {
        v = match (step, v) {
            (Step::Key(k), Value::Object(o)) => o.get(k)?,
            (Step::Index(i), Value::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

/// The JSON pointer of a path (RFC 6901).
fn pointer(path: &[Step]) -> String {
    let mut p = String::new();
    for step in path {
        p.push('/');
        match step {
            Step::Key(k) => p.push_str(&crate::schema::escape_pointer(k)),
            Step::Index(i) => p.push_str(&i.to_string()),
        }
    }
    p
}

/// The marker put where a string's middle was cut.
fn string_marker(left_out: usize, total: usize, handle: &str, offset: usize) -> String {
    format!(
        "\n[... {left_out} of {total} bytes left out here; read_result \
         {{\"handle\":\"{handle}\",\"offset\":{offset}}} reads on from here in the full result ...]\n"
    )
}

/// Room for a string's marker once escaped, with the widest numbers.
fn marker_room(handle_len: usize) -> usize {
    let wide = usize::MAX;
    super::escaped_len(&string_marker(wide, wide, &"h".repeat(handle_len), wide))
}

/// Room for the record (its key and the comma before it included) without omissions, and
/// for each omission.
fn record_room(arena: &[Node], handle_len: usize) -> (usize, usize) {
    let pointer = arena.iter().map(|n| n.ptr_len).max().unwrap_or(0);
    // each omission: its keys, a unit, three 20-digit numbers and a pointer; the rest: two
    // numbers, the handle, and the message (which names a pointer, the handle and numbers)
    (600 + 2 * handle_len + pointer, OMISSION_ROOM + pointer)
}

/// The record's message: what the first cut left out and the call that reads on.
fn message(omitted: &[Omission], max_bytes: usize, original_bytes: usize, handle: &str) -> String {
    let Some(first) = omitted.first() else {
        return String::new();
    };
    let what = if first.pointer.is_empty() {
        "the result".to_string()
    } else {
        first.pointer.clone()
    };
    let unit = match first.unit {
        OmissionUnit::Items => "items",
        OmissionUnit::Bytes => "bytes",
        OmissionUnit::Members => "members",
    };
    let more = match omitted.len() {
        1 => String::new(),
        n => format!(" ({} more parts were shortened: see omitted)", n - 1),
    };
    format!(
        "this result was cut to fit {max_bytes} bytes: {what} shows {} of {} {unit}{more}; the \
         full result ({original_bytes} bytes of JSON) stays behind the handle: read_result \
         {{\"handle\":\"{handle}\",\"offset\":{}}} reads on from the first part left out",
        first.shown, first.total, first.offset
    )
}

#[cfg(test)]
#[path = "structured_tests.rs"]
mod tests;
