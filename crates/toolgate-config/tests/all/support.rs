//! A temp workspace, the real built-in tools, and a pipeline built from a configuration text.

use std::sync::Arc;
use toolgate_config::Config;
use toolgate_core::{
    ApprovalAnswer, IntoTool, Pipeline, Registry, Session, Tool, ToolCall, ToolResult,
};
use toolgate_test_support::{ScriptedApprover, TempWorkspace};

/// The built-in tools (run_shell with its default configuration).
pub fn tools() -> Vec<Arc<dyn Tool>> {
    let mut t = toolgate_tools::read_only_tools().unwrap();
    t.extend(toolgate_tools::write_tools().unwrap());
    t.extend(toolgate_tools::resource_tools().unwrap());
    t.push(
        toolgate_tools::shell::RunShell::new(Default::default())
            .into_tool()
            .unwrap(),
    );
    t
}

/// Loads `text` as `<ws>/toolgate.toml`.
pub fn load(ws: &TempWorkspace, text: &str) -> Result<Config, Vec<toolgate_config::Problem>> {
    let tools = tools();
    let names: Vec<&str> = tools.iter().map(|t| &*t.spec().name).collect();
    std::fs::write(ws.root().join("toolgate.toml"), text).unwrap();
    toolgate_config::load(&ws.root(), None, &names)
}

/// A pipeline over the built-in tools under the configuration `text`, with an approver that
/// rejects, and a session with `role` and `attrs`.
pub struct Setup {
    pub ws: TempWorkspace,
    pub pipeline: Pipeline,
    pub session: Session,
    pub approver: Arc<ScriptedApprover>,
    n: std::sync::atomic::AtomicU32,
}

impl Setup {
    pub fn new(ws: TempWorkspace, text: &str, role: Option<&str>, attrs: &[&str]) -> Setup {
        Setup::with_grants(ws, text, role, attrs, None)
    }

    /// [`Setup::new`] with a grant store the authorize stage consults on `ask`.
    pub fn with_grants(
        ws: TempWorkspace,
        text: &str,
        role: Option<&str>,
        attrs: &[&str],
        grants: Option<Arc<dyn toolgate_core::grant::GrantStore>>,
    ) -> Setup {
        let config = load(&ws, text).unwrap_or_else(|p| panic!("{p:?}"));
        let mut builder = Registry::builder().tools(tools().into_iter().map(|t| config.limit(t)));
        for p in config.profiles() {
            builder = builder.profile(p.clone());
        }
        let approver = Arc::new(ScriptedApprover::always(ApprovalAnswer::Rejected {
            reason: "the test rejects".into(),
        }));
        let mut pipeline = Pipeline::builder(builder.build().unwrap())
            .policy(config.policy())
            .approver(approver.clone());
        if let Some(g) = grants {
            pipeline = pipeline.grants(g);
        }
        let pipeline = pipeline.build();
        let attrs = attrs
            .iter()
            .map(|a| toolgate_config::parse_attr(a).unwrap())
            .collect();
        let setup = config.session(role, None, attrs).unwrap();
        let mut session = pipeline
            .session("s")
            .profile(setup.profile)
            .workspace(ws.workspace());
        for (k, v) in setup.attributes {
            session = session.attribute(k, v);
        }
        let session = session.build().unwrap();
        Setup {
            ws,
            pipeline,
            session,
            approver,
            n: Default::default(),
        }
    }

    pub async fn call(&self, tool: &str, args: serde_json::Value) -> ToolResult {
        let n = self.n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.pipeline
            .dispatch(ToolCall::new(format!("c{n}"), tool, args), &self.session)
            .await
    }
}
