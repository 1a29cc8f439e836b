//! A workspace with a contacts book, files to attach, the mail tools in a pipeline (with its
//! memory ledger) under a configuration's rules, and a recording SMTP server.

use super::smtp::SmtpServer;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{Pipeline, PreApproved, Registry, Session, ToolCall, ToolResult, Workspace};
use toolgate_mail::{MailConfig, Tls};

/// The contacts book of the tests.
pub const CONTACTS: &str = "name,email,organization,aliases\n\
    张伟,zhang.wei@example.cn,Example Ltd,张总;Mr. Zhang\n\
    Ann Lee,ann@company.com,Company,Annie\n\
    Rival Person,someone@rival.com,Rival,\n";

/// The PDF the tests attach: a header, binary bytes, an end marker.
pub fn pdf_bytes() -> Vec<u8> {
    let mut b = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    b.extend((0..3000u32).map(|i| (i * 7 % 256) as u8));
    b.extend_from_slice(b"\n%%EOF\n");
    b
}

/// The configuration's rules: deny a secret file and a rival's domain.
pub const RULES: &str = r#"
[[rules]]
decision = "deny"
resource = "path:reports/secret*"

[[rules]]
decision = "deny"
resource = "recipient:*@rival.com"
reason = "no mail to competitors"
"#;

pub struct Setup {
    pub dir: tempfile::TempDir,
    pub p: Pipeline,
    pub server: SmtpServer,
    pub ws: Workspace,
}

/// Starts a server with `server_args` and builds the pipeline with `edit` applied to the
/// configuration; `None` when Python is not configured.
pub fn setup(server_args: &[&str], edit: impl FnOnce(MailConfig) -> MailConfig) -> Option<Setup> {
    setup_with(server_args, |c, _| edit(c))
}

/// [`setup`] with `edit` given the server too (its CA files).
pub fn setup_with(
    server_args: &[&str],
    edit: impl FnOnce(MailConfig, &SmtpServer) -> MailConfig,
) -> Option<Setup> {
    let server = SmtpServer::start(server_args)?;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("contacts.csv"), CONTACTS).unwrap();
    std::fs::create_dir(root.join("reports")).unwrap();
    std::fs::write(root.join("reports/analysis-report.pdf"), pdf_bytes()).unwrap();
    std::fs::write(root.join("reports/secret-plan.pdf"), b"%PDF-1.4 secret").unwrap();
    std::fs::write(root.join("notes.txt"), "the analysis is done\n").unwrap();
    let config = edit(
        MailConfig::new("127.0.0.1", "Assistant <assistant@example.com>")
            .port(server.port)
            .tls(Tls::None)
            .contacts([root.join("contacts.csv")])
            .timeout(Duration::from_secs(10)),
        &server,
    );
    let tools = toolgate_mail::tools(config).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| &*t.spec().name).collect();
    let config =
        toolgate_config::load_str(root, &root.join("toolgate.toml"), RULES, &names).unwrap();
    let p = Pipeline::builder(Registry::builder().tools(tools).build().unwrap())
        .policy(config.policy())
        .approver(Arc::new(PreApproved))
        .build();
    let ws = Workspace::open(root).unwrap();
    Some(Setup { dir, p, server, ws })
}

impl Setup {
    pub fn session(&self, id: &str) -> Session {
        self.p
            .session(id)
            .workspace(self.ws.clone())
            .build()
            .unwrap()
    }

    pub async fn call(&self, s: &Session, id: &str, tool: &str, args: Value) -> ToolResult {
        self.p.dispatch(ToolCall::new(id, tool, args), s).await
    }

    pub async fn call_keyed(&self, s: &Session, id: &str, key: &str, args: Value) -> ToolResult {
        self.p
            .dispatch(
                ToolCall::new(id, "send_email", args).with_idempotency_key(key),
                s,
            )
            .await
    }

    /// The handle search_files gives `s` for the analysis report (each call a new one).
    pub async fn report_handle(&self, s: &Session) -> String {
        static FINDS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = FINDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let r = self
            .call(
                s,
                &format!("find-{n}"),
                "search_files",
                json!({"query": "analysis", "kind": "pdf"}),
            )
            .await;
        assert!(!r.is_error, "{r:?}");
        let files = &r.structured_content.as_ref().unwrap()["files"];
        assert_eq!(files.as_array().unwrap().len(), 1, "{files}");
        files[0]["handle"].as_str().unwrap().to_string()
    }
}

/// The error's kind and reason, as the model reads them.
pub fn kind_reason(r: &ToolResult) -> (String, String) {
    assert!(r.is_error, "{r:?}");
    let e = r.error.as_ref().unwrap();
    (
        e.kind.as_str().to_string(),
        e.reason.as_deref().unwrap_or("").to_string(),
    )
}
