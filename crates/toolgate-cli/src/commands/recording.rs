//! Where `toolgate call` and `toolgate serve` record: the audit sink, the store for
//! truncated results, the approval grants and the idempotency ledger, chosen from
//! `--audit FILE`, `--no-audit` and `--store PATH`.

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toolgate_core::{
    AuditSink, GrantStore, JsonlAuditSink, Ledger, MemoryResultStore, NullAuditSink, Pipeline,
    ResultStore, Workspace,
};
use toolgate_store::{SqliteAuditSink, SqliteResultStore, Store};

/// The audit sink and result store of one command run.
pub struct Recording {
    /// The audit sink: the store's (default), a JSON-lines file, or none.
    pub audit: Arc<dyn AuditSink>,
    /// Truncated results: the store's when it opened, else memory (this run only).
    pub results: Arc<dyn ResultStore>,
    store: Option<Store>,
    sqlite: Option<Arc<SqliteAuditSink>>,
    /// The files it writes (the store, a JSON-lines log), which no tool may read.
    files: Vec<PathBuf>,
}

impl Recording {
    /// The files it writes: the store (when open) and the JSON-lines audit log (`--audit`),
    /// which run_shell must not read.
    pub fn files(&self) -> Vec<&Path> {
        self.files.iter().map(PathBuf::as_path).collect()
    }

    /// Opens the store (`store`, or the workspace's `.toolgate/toolgate.db`) and the sink.
    /// When nothing is audited to the store, a store that cannot be opened only costs keeping
    /// truncated results in memory; otherwise it is an error.
    ///
    /// # Errors
    /// The store or the JSON-lines file cannot be opened.
    pub fn open(
        workspace: &Workspace,
        store: Option<PathBuf>,
        audit: Option<&Path>,
        no_audit: bool,
    ) -> anyhow::Result<Self> {
        let store_path = match store {
            // the workspace's own .toolgate is made (confined) for a store named in it
            Some(p) if p.parent() == Some(&workspace.root().join(".toolgate")) => {
                super::workspace_store(workspace)?;
                p
            }
            Some(p) => p,
            None => super::workspace_store(workspace)?,
        };
        let audit_needs_store = !no_audit && audit.is_none();
        let audit_file = audit.filter(|_| !no_audit).map(Path::to_path_buf);
        let store = match Store::open(&store_path) {
            Ok(s) => Some(s),
            Err(e) if audit_needs_store => return Err(e.into()),
            Err(e) => {
                tracing::warn!(error = %e, "truncated results are kept in memory for this run only");
                None
            }
        };
        let mut sqlite = None;
        let audit: Arc<dyn AuditSink> = if no_audit {
            Arc::new(NullAuditSink)
        } else if let Some(path) = audit {
            Arc::new(
                JsonlAuditSink::open(path)
                    .with_context(|| format!("opening the audit log {}", path.display()))?,
            )
        } else {
            let store = store.as_ref().context("the store is not open")?;
            let sink = Arc::new(SqliteAuditSink::new(store)?);
            sqlite = Some(sink.clone());
            sink
        };
        let results: Arc<dyn ResultStore> = match &store {
            Some(s) => Arc::new(SqliteResultStore::new(s.clone())),
            None => Arc::new(MemoryResultStore::default()),
        };
        let mut files = Vec::new();
        if store.is_some() {
            files.push(store_path.clone());
        }
        if let Some(path) = audit_file {
            files.push(path);
        }
        Ok(Recording {
            audit,
            results,
            store,
            sqlite,
            files,
        })
    }

    /// The approval grants: the store's grants table, when the store opened.
    pub fn grants(&self) -> Option<Arc<dyn GrantStore>> {
        self.store
            .as_ref()
            .map(|s| Arc::new(s.clone()) as Arc<dyn GrantStore>)
    }

    /// The idempotency ledger: the store's, shared by every process using the store, when it
    /// opened (otherwise the pipeline's default, in memory for this run only).
    pub fn ledger(&self) -> Option<Arc<dyn Ledger>> {
        self.store
            .as_ref()
            .map(|s| Arc::new(s.clone()) as Arc<dyn Ledger>)
    }

    /// The store as the daily quota's counter, when it opened.
    pub fn quota_store(&self) -> Option<Arc<dyn toolgate_core::rate::QuotaStore>> {
        self.store
            .as_ref()
            .map(|s| Arc::new(s.clone()) as Arc<dyn toolgate_core::rate::QuotaStore>)
    }

    /// Commits every audit record the pipeline produced and every truncated result it
    /// queued for the store, then prunes expired results and ledger entries past the
    /// retention.
    ///
    /// # Errors
    /// Records the store's writer could not commit; truncated results it could not write.
    pub fn finish(&self, pipeline: &Pipeline) -> anyhow::Result<()> {
        let flushed = match &self.sqlite {
            Some(sink) => sink.flush_checked().map_err(anyhow::Error::from),
            None => {
                pipeline.audit().flush();
                Ok(())
            }
        };
        let kept = self
            .results
            .flush()
            .map_err(|e| anyhow::anyhow!("{}", e.message))
            .context("writing the truncated results");
        if let Some(s) = &self.store {
            let now = toolgate_core::audit::now_us(std::time::SystemTime::now());
            if let Err(e) = s.prune_results(now) {
                tracing::warn!(error = %e, "pruning expired results");
            }
            let retention = pipeline.ledger_options().retention;
            let before = now.saturating_sub(u64::try_from(retention.as_micros()).unwrap_or(0));
            if let Err(e) = Ledger::prune(s, before, now) {
                tracing::warn!(error = %e, "pruning the idempotency ledger");
            }
        }
        flushed.and(kept)
    }
}
