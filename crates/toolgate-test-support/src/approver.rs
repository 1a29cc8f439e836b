//! A scripted approver: answers from a queue and remembers what it was asked.

use futures::future::BoxFuture;
use parking_lot::Mutex;
use std::collections::VecDeque;
use toolgate_core::{ApprovalAnswer, ApprovalRequest, Approver};

/// One request as the approver saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// The tool.
    pub tool: String,
    /// The call id.
    pub call_id: String,
    /// The rule that asked.
    pub rule: String,
    /// The arguments.
    pub arguments: serde_json::Value,
    /// What the tool said the call would change (a diff for the file tools).
    pub preview: Option<String>,
}

/// Answers requests in order from a script; when the script runs out it answers `fallback`.
pub struct ScriptedApprover {
    script: Mutex<VecDeque<ApprovalAnswer>>,
    fallback: ApprovalAnswer,
    asked: Mutex<Vec<Asked>>,
}

impl ScriptedApprover {
    /// An approver answering `answers` in order, then rejecting.
    pub fn new(answers: impl IntoIterator<Item = ApprovalAnswer>) -> Self {
        ScriptedApprover {
            script: Mutex::new(answers.into_iter().collect()),
            fallback: ApprovalAnswer::Rejected {
                reason: "the script ran out".into(),
            },
            asked: Mutex::new(Vec::new()),
        }
    }

    /// An approver that always answers `answer`.
    pub fn always(answer: ApprovalAnswer) -> Self {
        ScriptedApprover {
            script: Mutex::new(VecDeque::new()),
            fallback: answer,
            asked: Mutex::new(Vec::new()),
        }
    }

    /// Every request so far.
    pub fn asked(&self) -> Vec<Asked> {
        self.asked.lock().clone()
    }
}

impl Approver for ScriptedApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalAnswer> {
        self.asked.lock().push(Asked {
            tool: request.tool.name.to_string(),
            call_id: request.call_id.to_string(),
            rule: request.rule.to_string(),
            arguments: request.arguments.clone(),
            preview: request.preview.map(str::to_owned),
        });
        let answer = self
            .script
            .lock()
            .pop_front()
            .unwrap_or_else(|| self.fallback.clone());
        Box::pin(async move { answer })
    }
}
