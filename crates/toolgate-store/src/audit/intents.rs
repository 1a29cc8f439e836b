//! Matching intent records to their calls' own records.
//!
//! A call that may act has two records: its intent (outcome `started`), committed before its
//! handler ran, and its own record after. Both carry the call's session, call id and dispatch
//! time (`time_us`), which no other call of the session shares
//! ([`toolgate_core::AuditRecord::time_us`]): call ids alone repeat where a session lets them
//! (the stateless requests of one MCP caller, each free to be id 1), or when a call is sent
//! again after a crash. Read in `seq` order, an intent is completed by the next record with the
//! same three. An intent nothing completes is unfinished: the process stopped while the call
//! ran, and whether it acted is unknown.

use std::collections::HashMap;
use toolgate_core::Outcome;

/// The stored outcome of an intent record.
pub(crate) const STARTED: &str = Outcome::Started.as_str();

/// What an intent and its call's own record share: session, call id, dispatch time.
type Key = (Box<str>, Box<str>, u64);

/// Intents seen and not yet completed, fed records in `seq` order. Memory grows with the
/// calls in flight at any point and the unfinished ones, not with the log.
#[derive(Debug, Default)]
pub(crate) struct Intents {
    open: HashMap<Key, u64>,
    unfinished: Vec<u64>,
}

impl Intents {
    /// Takes the next record: its `seq`, session, call id, `time_us` and outcome.
    pub(crate) fn see(
        &mut self,
        seq: u64,
        session: &str,
        call_id: &str,
        time_us: u64,
        outcome: &str,
    ) {
        if outcome == STARTED {
            // the same three again: another process's call in the same microsecond; the
            // earlier intent can no longer be told apart, so it counts as unfinished
            if let Some(before) = self
                .open
                .insert((session.into(), call_id.into(), time_us), seq)
            {
                self.unfinished.push(before);
            }
        } else if !self.open.is_empty() {
            // a lookup by borrowed parts would need a key type of its own; intents are few
            let key: Key = (session.into(), call_id.into(), time_us);
            self.open.remove(&key);
        }
    }

    /// The sequence numbers of the intents nothing completed, ascending.
    pub(crate) fn unfinished(mut self) -> Vec<u64> {
        self.unfinished.extend(self.open.into_values());
        self.unfinished.sort_unstable();
        self.unfinished
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intents_pair_with_the_record_of_their_call() {
        let mut i = Intents::default();
        let rows: &[(u64, &str, &str, u64, &str)] = &[
            (1, "s", "a", 10, STARTED),
            (2, "s", "b", 11, STARTED),
            // a duplicate of `a` refused while `a` ran: its own time, completes nothing
            (3, "s", "a", 12, "recoverable_error"),
            (4, "t", "a", 10, "ok"), // another session's `a`
            (5, "s", "b", 11, "fatal_error"),
            // `c` was killed, then sent again by a new process: the first stays unfinished
            (6, "s", "c", 13, STARTED),
            (7, "s", "c", 20, STARTED),
            (8, "s", "c", 20, "ok"),
            (9, "s", "d", 21, STARTED),
            // a session whose call ids repeat: two calls `1` in flight at once, the second
            // ends first, the first never ends
            (10, "m", "1", 30, STARTED),
            (11, "m", "1", 31, STARTED),
            (12, "m", "1", 31, "ok"),
            // two processes, one session, one id, one microsecond: indistinguishable
            (13, "p", "x", 40, STARTED),
            (14, "p", "x", 40, STARTED),
            (15, "p", "x", 40, "ok"),
        ];
        for (seq, session, id, time, outcome) in rows {
            i.see(*seq, session, id, *time, outcome);
        }
        assert_eq!(i.unfinished(), [1, 6, 9, 10, 13]);
    }
}
