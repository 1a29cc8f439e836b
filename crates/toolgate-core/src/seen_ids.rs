//! [`SeenIds`]: the call ids a session has used, to refuse one used again, kept within a
//! bound: the most recent [`MAX_SEEN_IDS`] ids whose lengths add up to at most
//! [`MAX_SEEN_BYTES`]. An id older than that is forgotten, so its reuse is no longer caught;
//! a session's memory stays bounded however many calls it makes and however long their ids.

use crate::call::CallId;
use std::collections::{HashSet, VecDeque};

/// The most call ids a session remembers.
pub const MAX_SEEN_IDS: usize = 16_384;
/// The most bytes of call ids a session remembers.
pub const MAX_SEEN_BYTES: usize = 1 << 20;

/// The recent call ids of one session, oldest first.
#[derive(Debug, Default)]
pub(crate) struct SeenIds {
    set: HashSet<CallId>,
    order: VecDeque<CallId>,
    bytes: usize,
}

impl SeenIds {
    /// Records `id`; `false` when it is among the remembered ones.
    pub(crate) fn insert(&mut self, id: &CallId) -> bool {
        if self.set.contains(id) {
            return false;
        }
        let len = id.as_str().len();
        while !self.order.is_empty()
            && (self.order.len() >= MAX_SEEN_IDS || self.bytes + len > MAX_SEEN_BYTES)
        {
            if let Some(old) = self.order.pop_front() {
                self.bytes -= old.as_str().len();
                self.set.remove(&old);
            }
        }
        self.bytes += len;
        self.set.insert(id.clone());
        self.order.push_back(id.clone());
        true
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuse_is_caught_and_memory_stays_bounded() {
        let mut seen = SeenIds::default();
        assert!(seen.insert(&CallId::from("a")));
        assert!(!seen.insert(&CallId::from("a")));
        for i in 0..MAX_SEEN_IDS + 10 {
            assert!(seen.insert(&CallId::from(format!("call-{i}"))));
        }
        assert_eq!(seen.len(), MAX_SEEN_IDS);
        assert!(
            seen.insert(&CallId::from("a")),
            "the oldest id was forgotten"
        );
        assert!(!seen.insert(&CallId::from(format!("call-{}", MAX_SEEN_IDS + 9))));
        // long ids: bounded by bytes
        let big = "x".repeat(MAX_SEEN_BYTES / 4);
        for i in 0..10 {
            assert!(seen.insert(&CallId::from(format!("{big}{i}"))));
        }
        assert!(seen.bytes <= MAX_SEEN_BYTES, "{}", seen.bytes);
        assert!(seen.len() <= 4);
        // one id over the byte bound is still remembered, alone
        let huge = CallId::from("y".repeat(MAX_SEEN_BYTES + 1));
        assert!(seen.insert(&huge));
        assert!(!seen.insert(&huge));
        assert_eq!(seen.len(), 1);
    }
}
