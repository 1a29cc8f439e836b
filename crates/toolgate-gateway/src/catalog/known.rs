//! The upstreams' prompts as last listed, kept so that an older listing never overwrites a
//! newer one.
//!
//! Two listings of one upstream's prompts can run at once: a client's `prompts/list` (all
//! upstreams, one after the other) and the supervisor's listing again after the upstream's
//! `notifications/prompts/list_changed`. Each takes a number as it starts ([`begin`]); its
//! prompts replace the upstream's only when no listing that started later has been applied
//! ([`apply`]), so the prompts served after a change are those listed after it, whichever
//! listing ends last.
//!
//! [`begin`]: KnownPrompts::begin
//! [`apply`]: KnownPrompts::apply

use super::Known;
use std::collections::HashMap;

/// The prompts known, by listed name, and the listing each upstream's come from.
#[derive(Debug, Default)]
pub(crate) struct KnownPrompts {
    by_name: HashMap<String, Known>,
    /// Per upstream (by index): the number of the listing applied last.
    applied: HashMap<usize, u64>,
    /// The number the next listing takes.
    next: u64,
}

impl KnownPrompts {
    /// The prompt listed as `name`, as last listed.
    pub(crate) fn get(&self, name: &str) -> Option<&Known> {
        self.by_name.get(name)
    }

    /// A listing starts: its number, greater than every earlier listing's.
    pub(crate) fn begin(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// Upstream `upstream`'s prompts as the listing `listing` found them (`fresh`, by listed
    /// name): they replace the upstream's unless a listing that started later was applied
    /// already. `None` when they were not applied (older), else whether what is known of the
    /// upstream changed.
    pub(crate) fn apply(
        &mut self,
        upstream: usize,
        listing: u64,
        fresh: HashMap<String, Known>,
    ) -> Option<bool> {
        let last = self.applied.entry(upstream).or_default();
        if *last > listing {
            return None;
        }
        *last = listing;
        let before = self
            .by_name
            .values()
            .filter(|k| k.upstream == upstream)
            .count();
        let changed = before != fresh.len()
            || fresh
                .iter()
                .any(|(name, k)| self.by_name.get(name) != Some(k));
        self.by_name.retain(|_, k| k.upstream != upstream);
        self.by_name.extend(fresh);
        Some(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn prompt(upstream: usize, own: &str) -> (String, Known) {
        (
            format!("u{upstream}__{own}"),
            Known {
                upstream,
                own: own.into(),
                arguments: Vec::new(),
                blocked: None,
            },
        )
    }

    #[test]
    fn a_listing_that_started_earlier_and_ends_later_is_not_applied() {
        let mut known = KnownPrompts::default();
        // a client's listing starts, then the upstream says its prompts changed and the
        // supervisor lists them again; the supervisor's ends first
        let client = known.begin();
        let relist = known.begin();
        let fresh = HashMap::from([prompt(0, "old"), prompt(0, "new")]);
        assert_eq!(known.apply(0, relist, fresh), Some(true));
        // the client's listing, from before the change, ends: not applied
        let stale = HashMap::from([prompt(0, "old")]);
        assert_eq!(known.apply(0, client, stale), None);
        assert!(known.get("u0__new").is_some(), "the newer listing holds");
        // another upstream's prompts are its own
        let other = known.begin();
        assert_eq!(
            known.apply(1, other, HashMap::from([prompt(1, "p")])),
            Some(true)
        );
        assert!(known.get("u0__old").is_some() && known.get("u1__p").is_some());
        // the same prompts listed again: applied, nothing changed
        let again = known.begin();
        let same = HashMap::from([prompt(0, "old"), prompt(0, "new")]);
        assert_eq!(known.apply(0, again, same), Some(false));
        // an upstream that lists none any more
        let empty = known.begin();
        assert_eq!(known.apply(0, empty, HashMap::new()), Some(true));
        assert!(known.get("u0__new").is_none() && known.get("u1__p").is_some());
    }
}
