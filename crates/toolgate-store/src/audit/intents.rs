//! Matching intent records to their calls' own records.
//!
//! A call that may act has two records: its intent (outcome `started`), committed before its
//! handler ran, and its own record after. Read in `seq` order, an intent is completed by the
//! next record with the same session and call id, unless that is another intent (the same
//! id sent again by another process after a crash). Records refusing a duplicate call id
//! never ran and never had an intent: they complete nothing. An intent nothing completes is
//! unfinished: the process stopped while the call ran, and whether it acted is unknown.

use std::collections::HashMap;
use toolgate_core::Outcome;

/// The stored outcome of an intent record.
pub(crate) const STARTED: &str = Outcome::Started.as_str();

/// The error reason of a call refused because its id was in use: it has no intent.
const DUPLICATE: &str = "duplicate_call_id";

/// Intents seen and not yet completed, fed records in `seq` order. Memory grows with the
/// calls in flight at any point and the unfinished ones, not with the log.
#[derive(Debug, Default)]
pub(crate) struct Intents {
    open: HashMap<(Box<str>, Box<str>), u64>,
    unfinished: Vec<u64>,
}

impl Intents {
    /// Takes the next record.
    pub(crate) fn see(
        &mut self,
        seq: u64,
        session: &str,
        call_id: &str,
        outcome: &str,
        error_reason: Option<&str>,
    ) {
        if outcome == STARTED {
            if let Some(before) = self.open.insert((session.into(), call_id.into()), seq) {
                self.unfinished.push(before);
            }
        } else if error_reason != Some(DUPLICATE) && !self.open.is_empty() {
            // a lookup by borrowed parts would need a key type of its own; intents are few
            let key = (Box::<str>::from(session), Box::<str>::from(call_id));
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
    fn intents_pair_with_the_next_record_of_their_call() {
        let mut i = Intents::default();
        let rows: &[(u64, &str, &str, &str, Option<&str>)] = &[
            (1, "s", "a", STARTED, None),
            (2, "s", "b", STARTED, None),
            // a duplicate of `a` refused while `a` ran completes nothing
            (3, "s", "a", "recoverable_error", Some(DUPLICATE)),
            (4, "t", "a", "ok", None), // another session's `a`
            (5, "s", "b", "fatal_error", Some("tool_failed")),
            // `c` was killed, then sent again by a new process: the first stays unfinished
            (6, "s", "c", STARTED, None),
            (7, "s", "c", STARTED, None),
            (8, "s", "c", "ok", None),
            (9, "s", "d", STARTED, None),
        ];
        for (seq, session, id, outcome, reason) in rows {
            i.see(*seq, session, id, outcome, *reason);
        }
        assert_eq!(i.unfinished(), [1, 6, 9]);
    }
}
