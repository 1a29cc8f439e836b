//! Where full results live behind truncation handles, and paging through them.

use crate::error::ToolError;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Stores full results that were truncated, each behind an unguessable handle bound to the
/// session that produced it.
pub trait ResultStore: Send + Sync {
    /// Keeps `text` for `session` and returns its handle.
    ///
    /// # Errors
    /// `internal` when the store cannot keep it.
    fn put(&self, session: &str, text: String) -> Result<String, ToolError>;

    /// The full text behind `handle`, when it exists and belongs to `session`.
    ///
    /// # Errors
    /// `internal` when the store fails (absence is `Ok(None)`).
    fn get(&self, session: &str, handle: &str) -> Result<Option<Arc<str>>, ToolError>;

    /// Waits until every result kept so far is as durable as the store makes it (a store
    /// that writes in the background commits what it queued); the default does nothing.
    /// A process calls it before it ends, so another process of the same session can read
    /// the handles it gave out.
    ///
    /// # Errors
    /// `internal` when results could not be made durable (their handles may still read in
    /// this process).
    fn flush(&self) -> Result<(), ToolError> {
        Ok(())
    }
}

/// A new handle: `res_` and 32 hex digits from the thread's CSPRNG (128 bits).
pub fn new_handle() -> String {
    use rand::Rng;
    let v: u128 = rand::rng().random();
    format!("res_{v:032x}")
}

/// An in-memory [`ResultStore`] bounded by total bytes; the oldest results are dropped first.
pub struct MemoryResultStore {
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    map: HashMap<String, (Arc<str>, Arc<str>)>,
    order: VecDeque<String>,
    bytes: usize,
}

impl Default for MemoryResultStore {
    /// 64 MiB.
    fn default() -> Self {
        Self::new(64 << 20)
    }
}

impl MemoryResultStore {
    /// A store holding at most `max_bytes` of result text.
    pub fn new(max_bytes: usize) -> Self {
        MemoryResultStore {
            max_bytes,
            inner: Mutex::new(Inner::default()),
        }
    }
}

impl ResultStore for MemoryResultStore {
    fn put(&self, session: &str, text: String) -> Result<String, ToolError> {
        let handle = new_handle();
        let mut inner = self.inner.lock();
        inner.bytes += text.len();
        inner
            .map
            .insert(handle.clone(), (session.into(), text.into()));
        inner.order.push_back(handle.clone());
        while inner.bytes > self.max_bytes && inner.order.len() > 1 {
            if let Some(old) = inner.order.pop_front() {
                if let Some((_, t)) = inner.map.remove(&old) {
                    inner.bytes -= t.len();
                }
            }
        }
        Ok(handle)
    }

    fn get(&self, session: &str, handle: &str) -> Result<Option<Arc<str>>, ToolError> {
        let inner = self.inner.lock();
        Ok(inner
            .map
            .get(handle)
            .filter(|(s, _)| &**s == session)
            .map(|(_, t)| t.clone()))
    }
}

/// One page of a stored result.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Page {
    /// The text of this page.
    pub text: String,
    /// Byte offset of the page in the full result.
    pub offset: usize,
    /// Byte offset of the next page, absent at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Size of the full result in bytes.
    pub total_bytes: usize,
}

/// Cuts the page `[offset, offset + limit)` (bytes) out of `text`, moving both ends back to
/// UTF-8 character boundaries so no character is split, and ending it sooner when its text
/// escaped as a JSON string would be longer than `limit` bytes (quotes, backslashes and line
/// breaks take two bytes there): a page is sent as JSON, so `limit` bounds what goes on the
/// wire, not only what is read. A page always holds at least one character.
///
/// # Errors
/// `invalid_arguments` when `offset` is past the end.
pub fn page(text: &str, offset: usize, limit: usize) -> Result<Page, ToolError> {
    if offset > text.len() {
        return Err(ToolError::invalid_arguments(
            format!(
                "offset {offset} is past the end of the result ({} bytes); send an offset from \
                 0 to {}",
                text.len(),
                text.len()
            ),
            vec![crate::ArgumentFault {
                pointer: "/offset".into(),
                message: format!("must be at most {}", text.len()),
            }],
        ));
    }
    let start = floor_char_boundary(text, offset);
    let mut end = floor_char_boundary(text, start.saturating_add(limit).min(text.len()));
    let escaped = crate::truncate::escaped_len(&text[start..end]);
    if escaped > limit {
        // give back bytes from the end until the escaped text fits
        let mut over = escaped - limit;
        while over > 0 && end > start {
            let c = floor_char_boundary(text, end - 1);
            over = over.saturating_sub(crate::truncate::escaped_len(&text[c..end]));
            end = c;
        }
    }
    if end == start && start < text.len() {
        // a limit smaller than one character still makes progress
        end = ceil_char_boundary(text, start + 1);
    }
    Ok(Page {
        text: text[start..end].to_string(),
        offset: start,
        next_offset: (end < text.len()).then_some(end),
        total_bytes: text.len(),
    })
}

/// The largest char boundary at or below `i`.
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary at or above `i`.
pub fn ceil_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_bound_to_their_session() {
        let s = MemoryResultStore::default();
        let h = s.put("s1", "hello".into()).unwrap();
        assert!(h.starts_with("res_") && h.len() == 36);
        assert_eq!(s.get("s1", &h).unwrap().as_deref(), Some("hello"));
        assert_eq!(s.get("s2", &h).unwrap(), None);
        assert_eq!(s.get("s1", "res_nope").unwrap(), None);
    }

    #[test]
    fn oldest_results_are_evicted_past_the_cap() {
        let s = MemoryResultStore::new(10);
        let a = s.put("s", "123456".into()).unwrap();
        let b = s.put("s", "789012".into()).unwrap();
        assert_eq!(s.get("s", &a).unwrap(), None);
        assert!(s.get("s", &b).unwrap().is_some());
    }

    #[test]
    fn pages_respect_char_boundaries() {
        let text = "aé€😀b";
        let mut offset = 0;
        let mut all = String::new();
        loop {
            let p = page(text, offset, 2).unwrap();
            all.push_str(&p.text);
            match p.next_offset {
                Some(n) => offset = n,
                None => break,
            }
        }
        assert_eq!(all, text);
        assert!(page(text, 100, 1).is_err());
        assert_eq!(page(text, 2, 1).unwrap().offset, 1);
    }

    /// A page's JSON text is at most `limit` bytes whatever it holds, and paging still reads
    /// everything.
    #[test]
    fn a_page_is_bounded_once_escaped() {
        let text = "\"quoted\"\n\\ and \u{1b}[0m é\n".repeat(5000);
        let mut offset = 0;
        let mut all = String::new();
        loop {
            let p = page(&text, offset, 4096).unwrap();
            assert!(p.text.len() <= 4096);
            assert!(serde_json::to_string(&p.text).unwrap().len() <= 4096 + 2);
            all.push_str(&p.text);
            match p.next_offset {
                Some(n) => offset = n,
                None => break,
            }
        }
        assert_eq!(all, text);
    }
}
