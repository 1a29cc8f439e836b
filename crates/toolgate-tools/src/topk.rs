//! A bounded collection of the `k` smallest items seen: results stay sorted and memory stays
//! bounded however many items a walk produces.

use std::collections::BinaryHeap;

/// Keeps the `cap` smallest items pushed into it.
#[derive(Debug)]
pub(crate) struct TopK<T> {
    cap: usize,
    heap: BinaryHeap<T>,
}

impl<T: Ord> TopK<T> {
    /// Keeps at most `cap` items.
    pub(crate) fn new(cap: usize) -> Self {
        TopK {
            cap,
            heap: BinaryHeap::with_capacity(cap.min(1024)),
        }
    }

    /// The largest item kept, when the collection is full (a new item must be smaller than it
    /// to be kept).
    pub(crate) fn worst_if_full(&self) -> Option<&T> {
        if self.heap.len() >= self.cap {
            self.heap.peek()
        } else {
            None
        }
    }

    /// Keeps `item` if it is among the `cap` smallest so far.
    pub(crate) fn push(&mut self, item: T) {
        if self.heap.len() < self.cap {
            self.heap.push(item);
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if item < *worst {
                *worst = item;
            }
        }
    }

    /// Adds every item of `other`.
    pub(crate) fn merge(&mut self, other: TopK<T>) {
        for item in other.heap {
            self.push(item);
        }
    }

    /// The items kept, smallest first.
    pub(crate) fn into_sorted_vec(self) -> Vec<T> {
        self.heap.into_sorted_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_smallest_in_order() {
        let mut a = TopK::new(3);
        for i in [9, 4, 7, 1, 8, 3] {
            a.push(i);
        }
        assert_eq!(a.worst_if_full(), Some(&4));
        let mut b = TopK::new(3);
        for i in [5, 2] {
            b.push(i);
        }
        assert_eq!(b.worst_if_full(), None);
        a.merge(b);
        assert_eq!(a.into_sorted_vec(), vec![1, 2, 3]);
        let mut none = TopK::new(0);
        none.push(1);
        assert!(none.into_sorted_vec().is_empty());
    }
}
