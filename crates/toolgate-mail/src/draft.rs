//! `generate_email_draft`: a plain-text and an HTML body composed deterministically from key
//! points, with a greeting and closing in the language and tone asked.

use crate::handles::Draft;
use crate::text::has_control;
use crate::MailState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use toolgate_core::{Effects, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder, TypedTool};

/// The tone of a draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tone {
    /// "Dear ...", "Kind regards"; 尊敬的…, 此致敬礼.
    Formal,
    /// "Hello ...", "Best regards"; …，您好, 祝好.
    #[default]
    Neutral,
    /// "Hi ...", "Best"; …，你好, 祝好.
    Friendly,
}

/// The language of a draft's greeting, connecting lines and closing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
pub enum Language {
    /// English.
    #[default]
    #[serde(rename = "en")]
    English,
    /// Chinese (simplified).
    #[serde(rename = "zh")]
    Chinese,
}

/// Arguments of `generate_email_draft`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DraftArgs {
    /// Recipients: addresses or contact ids from search_contacts; the first is greeted.
    #[schemars(length(min = 1, max = 50))]
    pub to: Vec<String>,
    /// The subject line (one line).
    #[schemars(length(min = 1, max = 200))]
    pub subject: String,
    /// What the message says, one point each (kept as written, in order).
    #[schemars(length(min = 1, max = 30))]
    pub key_points: Vec<String>,
    /// The tone (default neutral).
    #[serde(default)]
    pub tone: Tone,
    /// The language of the greeting and closing: `en` or `zh` (default `en`).
    #[serde(default)]
    pub language: Language,
}

/// The result of `generate_email_draft`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DraftOutput {
    /// The draft's handle (`draft_...`): send it as `draft` of send_email.
    pub draft: String,
    /// The subject.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// The HTML body (every piece of text escaped).
    pub html: String,
}

/// The `generate_email_draft` tool.
#[derive(Debug)]
pub struct GenerateEmailDraft(Arc<MailState>);

impl GenerateEmailDraft {
    pub(crate) fn new(state: Arc<MailState>) -> Self {
        GenerateEmailDraft(state)
    }
}

const DESCRIPTION: &str = "Compose an email from key points: a greeting for the first \
recipient, the points as a list, and a closing, in English (`en`) or Chinese (`zh`), formal, \
neutral or friendly. Deterministic: the same arguments give the same text. Sends nothing. \
Returns {draft, subject, text, html}: show the text to the user if they should see it, then \
send it with send_email {to, draft}. `to` takes addresses or contact ids from search_contacts. \
To change the wording, call again with other points, or send your own `body` to send_email.";

impl TypedTool for GenerateEmailDraft {
    type Args = DraftArgs;
    type Output = DraftOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("generate_email_draft")
            .title("Generate email draft")
            .description(DESCRIPTION)
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("mail")
            .example(
                "A progress update in Chinese",
                serde_json::json!({
                    "to": ["zhang.wei@example.cn"],
                    "subject": "上周进展",
                    "key_points": ["分析报告已完成", "下周开始测试"],
                    "tone": "formal",
                    "language": "zh"
                }),
            )
    }

    fn guard(
        &self,
        args: &DraftArgs,
        _ctx: &ToolContext,
    ) -> Result<Vec<toolgate_core::Resource>, ToolError> {
        check_subject(&args.subject)?;
        crate::tools::recipients(&self.0, "to", &args.to)?;
        Ok(Vec::new())
    }

    async fn call(&self, args: DraftArgs, ctx: ToolContext) -> Result<DraftOutput, ToolError> {
        let to = crate::tools::recipients(&self.0, "to", &args.to)?;
        let first = &to[0];
        let name = self
            .0
            .contacts
            .by_address(first)
            .map(|c| c.name.clone())
            .unwrap_or_else(|| first.user().to_string());
        let sender = self
            .0
            .from
            .name
            .clone()
            .unwrap_or_else(|| self.0.from.email.user().to_string());
        let points: Vec<String> = args
            .key_points
            .iter()
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|p| !p.is_empty())
            .collect();
        let (text, html) = compose(
            &name,
            &sender,
            &args.subject,
            &points,
            args.tone,
            args.language,
        );
        let draft = self.0.handles.add_draft(Draft {
            session: ctx.session_id().to_string(),
            to: to.iter().map(ToString::to_string).collect(),
            subject: args.subject.clone(),
            text: text.clone(),
            html: html.clone(),
        });
        Ok(DraftOutput {
            draft,
            subject: args.subject,
            text,
            html,
        })
    }
}

/// Refuses a subject that could add mail headers.
///
/// # Errors
/// `invalid_input` with reason `header_injection`.
pub(crate) fn check_subject(subject: &str) -> Result<(), ToolError> {
    if has_control(subject) {
        return Err(ToolError::invalid_input(
            "the subject holds a line break or another control character, which would let it \
             add mail headers; send the subject as one line",
        )
        .with_reason("header_injection"));
    }
    if let Some(c) = crate::text::bidi_override(subject) {
        return Err(ToolError::invalid_input(format!(
            "the subject holds U+{:04X}, a bidirectional override that makes the text after it \
             read in another order than it is written; send the subject without it (right-to-left \
             text needs no override)",
            c as u32
        ))
        .with_reason("header_injection"));
    }
    if crate::text::has_encoded_word(subject) {
        return Err(ToolError::invalid_input(
            "the subject holds an RFC 2047 encoded word (=?charset?q?...?=), which mail readers \
             would decode into other text (line breaks included); send the subject as plain \
             text: it is encoded for you when it needs to be",
        )
        .with_reason("header_injection"));
    }
    Ok(())
}

/// The plain-text and HTML bodies.
fn compose(
    name: &str,
    sender: &str,
    subject: &str,
    points: &[String],
    tone: Tone,
    language: Language,
) -> (String, String) {
    let (greeting, intro, closing): (String, String, &[&str]) = match language {
        Language::English => (
            match tone {
                Tone::Formal => format!("Dear {name},"),
                Tone::Neutral => format!("Hello {name},"),
                Tone::Friendly => format!("Hi {name},"),
            },
            format!("Here are the main points about \"{subject}\":"),
            match tone {
                Tone::Formal => &["Kind regards,"],
                Tone::Neutral => &["Best regards,"],
                Tone::Friendly => &["Best,"],
            },
        ),
        Language::Chinese => (
            match tone {
                Tone::Formal => format!("尊敬的{name}："),
                Tone::Neutral => format!("{name}，您好："),
                Tone::Friendly => format!("{name}，你好！"),
            },
            format!("关于「{subject}」，要点如下："),
            match tone {
                Tone::Formal => &["此致", "敬礼"],
                Tone::Neutral | Tone::Friendly => &["祝好！"],
            },
        ),
    };
    let mut text = format!("{greeting}\n\n{intro}\n\n");
    for p in points {
        text.push_str(&format!("- {p}\n"));
    }
    text.push('\n');
    for c in closing {
        text.push_str(c);
        text.push('\n');
    }
    text.push_str(sender);
    text.push('\n');
    let mut html = format!(
        "<p>{}</p>\n<p>{}</p>\n<ul>\n",
        escape(&greeting),
        escape(&intro)
    );
    for p in points {
        html.push_str(&format!("<li>{}</li>\n", escape(p)));
    }
    html.push_str("</ul>\n<p>");
    for c in closing {
        html.push_str(&escape(c));
        html.push_str("<br>\n");
    }
    html.push_str(&escape(sender));
    html.push_str("</p>\n");
    (text, html)
}

/// `text` with `&`, `<`, `>`, `"` and `'` escaped for HTML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn drafts_are_deterministic_in_english_and_chinese_with_html_escaped() {
        let points = vec![
            "Report <final> & signed".to_string(),
            "Tests next week".to_string(),
        ];
        let (text, html) = compose("Ann", "Bo", "Q3", &points, Tone::Formal, Language::English);
        assert_eq!(
            text,
            "Dear Ann,\n\nHere are the main points about \"Q3\":\n\n- Report <final> & signed\n\
             - Tests next week\n\nKind regards,\nBo\n"
        );
        assert!(
            html.contains("<li>Report &lt;final&gt; &amp; signed</li>"),
            "{html}"
        );
        assert!(!html.contains("<final>"));
        let (zh, _) = compose(
            "张伟",
            "Bo",
            "上周进展",
            &points[1..],
            Tone::Formal,
            Language::Chinese,
        );
        assert_eq!(
            zh,
            "尊敬的张伟：\n\n关于「上周进展」，要点如下：\n\n- Tests next week\n\n此致\n敬礼\nBo\n"
        );
        assert_eq!(
            compose("A", "B", "S", &points, Tone::Friendly, Language::English),
            compose("A", "B", "S", &points, Tone::Friendly, Language::English)
        );
        assert!(check_subject("Q3\r\nBcc: x@evil.com").is_err());
        assert!(check_subject("=?utf-8?q?Hi=0D=0ABcc:_x@y?=").is_err());
        assert!(check_subject("Is 2+2=? 4").is_ok());
    }
}
