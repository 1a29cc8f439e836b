//! [`MemoryLedger`]: the ledger in memory, for a library without a store.

use super::{
    decide, hex, Claim, Claimed, Held, Ledger, LedgerEntry, LedgerError, LedgerFilter, LedgerState,
    Recorded, Settled, Settlement, Stored, Verdict,
};
use parking_lot::Mutex;
use std::collections::HashMap;

/// The ledger in memory: one process's calls, lost when it ends. Entries expire with the
/// retention of the claims made on it (pruned every 256 claims); recorded results are capped
/// at `max_bytes` in all, past which the oldest ended entries are forgotten first (an entry in
/// progress or unsettled is never forgotten early).
pub struct MemoryLedger {
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<(Option<String>, String), Entry>,
    bytes: usize,
    claims: u32,
}

#[derive(Debug, Clone)]
struct Entry {
    derived: bool,
    tool: String,
    args_hash: [u8; 32],
    session: String,
    call_id: String,
    arguments: String,
    state: LedgerState,
    holder: Option<u64>,
    lease_until_us: Option<u64>,
    created_us: u64,
    updated_us: u64,
    settled_by: Option<String>,
    result: Option<String>,
}

impl Entry {
    fn stored(&self) -> Stored<'_> {
        Stored {
            tool: &self.tool,
            args_hash: &self.args_hash,
            derived: self.derived,
            state: self.state,
            lease_until_us: self.lease_until_us,
            created_us: self.created_us,
            updated_us: self.updated_us,
            session: &self.session,
            call_id: &self.call_id,
        }
    }

    fn bytes(&self) -> usize {
        self.result.as_ref().map_or(0, String::len) + self.arguments.len()
    }

    fn listed(&self, principal: &Option<String>, key: &str, now_us: u64) -> LedgerEntry {
        LedgerEntry {
            key: key.to_string(),
            principal: principal.clone(),
            derived: self.derived,
            tool: self.tool.clone(),
            args_hash: hex(&self.args_hash),
            session: self.session.clone(),
            call_id: self.call_id.clone(),
            arguments: self.arguments.clone(),
            state: self.stored().state_at(now_us),
            created_us: self.created_us,
            updated_us: self.updated_us,
            lease_until_us: self.lease_until_us,
            settled_by: self.settled_by.clone(),
        }
    }

    fn claimed_by(claim: &Claim<'_>) -> Entry {
        Entry {
            derived: claim.derived,
            tool: claim.tool.to_string(),
            args_hash: *claim.args_hash,
            session: claim.session.to_string(),
            call_id: claim.call_id.to_string(),
            arguments: claim.arguments.to_string(),
            state: LedgerState::InProgress,
            holder: Some(claim.holder),
            lease_until_us: Some(claim.lease_until_us),
            created_us: claim.now_us,
            updated_us: claim.now_us,
            settled_by: None,
            result: None,
        }
    }
}

impl Default for MemoryLedger {
    /// 64 MiB of recorded results.
    fn default() -> Self {
        Self::new(64 << 20)
    }
}

impl MemoryLedger {
    /// A ledger keeping at most `max_bytes` of recorded results and argument previews.
    pub fn new(max_bytes: usize) -> Self {
        MemoryLedger {
            max_bytes,
            inner: Mutex::new(Inner::default()),
        }
    }
}

type Key = (Option<String>, String);

fn key_of(principal: Option<&str>, key: &str) -> Key {
    (principal.map(str::to_string), key.to_string())
}

impl Inner {
    fn put(&mut self, k: Key, e: Entry) {
        self.bytes += e.bytes();
        if let Some(old) = self.entries.insert(k, e) {
            self.bytes -= old.bytes();
        }
    }

    fn remove(&mut self, k: &Key) -> Option<Entry> {
        let old = self.entries.remove(k)?;
        self.bytes -= old.bytes();
        Some(old)
    }

    fn held_mut(&mut self, held: &Held<'_>) -> Option<&mut Entry> {
        self.entries
            .get_mut(&key_of(held.principal, held.key))
            .filter(|e| e.state == LedgerState::InProgress && e.holder == Some(held.holder))
    }

    fn prune(&mut self, before_us: u64, now_us: u64) -> usize {
        let old: Vec<Key> = self
            .entries
            .iter()
            .filter(|(_, e)| e.updated_us < before_us && e.stored().state_at(now_us).is_ended())
            .map(|(k, _)| k.clone())
            .collect();
        for k in &old {
            self.remove(k);
        }
        old.len()
    }

    /// Forgets the oldest ended entries while over `max`.
    fn shed(&mut self, max: usize) {
        if self.bytes <= max {
            return;
        }
        let mut ended: Vec<(u64, Key)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.state.is_ended())
            .map(|(k, e)| (e.updated_us, k.clone()))
            .collect();
        ended.sort_unstable_by_key(|(t, _)| *t);
        for (_, k) in ended {
            if self.bytes <= max {
                break;
            }
            self.remove(&k);
        }
    }
}

impl Ledger for MemoryLedger {
    fn claim(&self, claim: &Claim<'_>) -> Result<Claimed, LedgerError> {
        let mut inner = self.inner.lock();
        inner.claims = inner.claims.wrapping_add(1);
        if inner.claims.is_multiple_of(256) {
            inner.prune(claim.expire_before_us, claim.now_us);
        }
        let k = key_of(claim.principal, claim.key);
        let verdict = match inner.entries.get(&k) {
            None => Verdict::Take,
            Some(e) => decide(&e.stored(), claim),
        };
        match verdict {
            Verdict::Take => {
                inner.put(k, Entry::claimed_by(claim));
                Ok(Claimed::Held)
            }
            Verdict::Refuse(answer) => Ok(answer),
            Verdict::Replay => {
                let e = &inner.entries[&k];
                let text = e.result.as_deref().unwrap_or("null");
                Ok(Claimed::Done {
                    state: e.state,
                    result: Recorded::from_json(claim.key, text)?,
                })
            }
        }
    }

    fn lookup(&self, claim: &Claim<'_>) -> Result<Option<Claimed>, LedgerError> {
        let inner = self.inner.lock();
        let Some(e) = inner.entries.get(&key_of(claim.principal, claim.key)) else {
            return Ok(None);
        };
        Ok(match decide(&e.stored(), claim) {
            Verdict::Take => None,
            Verdict::Refuse(answer) => Some(answer),
            Verdict::Replay => Some(Claimed::Done {
                state: e.state,
                result: Recorded::from_json(claim.key, e.result.as_deref().unwrap_or("null"))?,
            }),
        })
    }

    fn complete(
        &self,
        held: &Held<'_>,
        state: LedgerState,
        result: &str,
        now_us: u64,
    ) -> Result<bool, LedgerError> {
        let mut inner = self.inner.lock();
        let Some(e) = inner.held_mut(held) else {
            return Ok(false);
        };
        let mut e = e.clone();
        e.state = state;
        e.holder = None;
        e.lease_until_us = None;
        e.updated_us = now_us;
        e.result = Some(result.to_string());
        inner.put(key_of(held.principal, held.key), e);
        inner.shed(self.max_bytes);
        Ok(true)
    }

    fn release(&self, held: &Held<'_>) -> Result<bool, LedgerError> {
        let mut inner = self.inner.lock();
        if inner.held_mut(held).is_none() {
            return Ok(false);
        }
        inner.remove(&key_of(held.principal, held.key));
        Ok(true)
    }

    fn abandon(&self, held: &Held<'_>, now_us: u64) -> Result<bool, LedgerError> {
        let mut inner = self.inner.lock();
        let Some(e) = inner.held_mut(held) else {
            return Ok(false);
        };
        e.state = LedgerState::Unknown;
        e.holder = None;
        e.lease_until_us = None;
        e.updated_us = now_us;
        Ok(true)
    }

    fn take_over(&self, claim: &Claim<'_>) -> Result<bool, LedgerError> {
        let mut inner = self.inner.lock();
        let k = key_of(claim.principal, claim.key);
        let unsettled = inner.entries.get(&k).is_some_and(|e| {
            e.stored().state_at(claim.now_us) == LedgerState::Unknown
                && e.tool == claim.tool
                && e.args_hash == *claim.args_hash
        });
        if unsettled {
            inner.put(k, Entry::claimed_by(claim));
        }
        Ok(unsettled)
    }

    fn settle(
        &self,
        principal: Option<&str>,
        key: &str,
        settlement: Settlement<'_>,
        now_us: u64,
    ) -> Result<Settled, LedgerError> {
        let mut inner = self.inner.lock();
        let k = key_of(principal, key);
        let Some(e) = inner.entries.get(&k) else {
            return Ok(Settled::Missing);
        };
        let before = e.listed(&k.0, key, now_us);
        if before.state != LedgerState::Unknown {
            return Ok(Settled::NotUnsettled(before));
        }
        match settlement {
            Settlement::Done { result, by } => {
                let mut e = e.clone();
                e.state = LedgerState::Succeeded;
                e.holder = None;
                e.lease_until_us = None;
                e.updated_us = now_us;
                e.settled_by = Some(by.to_string());
                e.result = Some(result.to_string());
                inner.put(k, e);
            }
            Settlement::NotDone => {
                inner.remove(&k);
            }
        }
        Ok(Settled::Settled(before))
    }

    fn list(&self, filter: &LedgerFilter, now_us: u64) -> Result<Vec<LedgerEntry>, LedgerError> {
        let inner = self.inner.lock();
        let mut out: Vec<LedgerEntry> = inner
            .entries
            .iter()
            .filter(|((_, key), _)| filter.key.as_deref().is_none_or(|k| k == key))
            .map(|((principal, key), e)| e.listed(principal, key, now_us))
            .filter(|e| filter.state.is_none_or(|s| s == e.state))
            .collect();
        out.sort_by(|a, b| (a.created_us, &a.key).cmp(&(b.created_us, &b.key)));
        Ok(out)
    }

    fn prune(&self, before_us: u64, now_us: u64) -> Result<usize, LedgerError> {
        Ok(self.inner.lock().prune(before_us, now_us))
    }
}

impl std::fmt::Debug for MemoryLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.lock();
        f.debug_struct("MemoryLedger")
            .field("entries", &inner.entries.len())
            .field("bytes", &inner.bytes)
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}
