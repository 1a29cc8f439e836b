//! `send_email`: one message over SMTP, to recipients the policy covers, with attachments
//! only from handles.
//!
//! The sequence:
//! 1. **guard** (every call, no network): the subject and the attachment names hold no line
//!    break (header injection); the body's line breaks become line feeds, so no lone carriage
//!    return reaches the server (SMTP smuggling, [`crate::text::line_feeds_only`]); exactly one of `body` and `draft`; every recipient (`to` and
//!    `cc`, addresses or contact ids) is an address, declared as a `recipient:` resource; every
//!    attachment is a handle this session got from `search_files` for a file unchanged since,
//!    declared as a path the call reads; the attachments fit the size cap;
//! 2. **preview** (only when a person is asked): every recipient, the subject, every
//!    attachment's name, size and type, and the start of the body;
//! 3. **call**: the same checks again on the files as they are now (read through the
//!    workspace's handle, their identity checked after the read), the message built with the
//!    `Message-ID` derived from the call's idempotency key, its size checked, then sent
//!    ([`crate::smtp::send`]). A failure before the server accepted the message is marked
//!    `no_effect` (the ledger frees the key); one after is `outcome_unknown`.

use crate::handles::{FileHandle, Identity};
use crate::smtp::{self, Cause, Failure};
use crate::text::{has_control, has_encoded_word, line_feeds_only};
use crate::MailState;
use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::sync::Arc;
use toolgate_core::{
    Effects, ErrorKind, Resource, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder,
    TypedTool,
};

/// At most this many bytes of the body are shown to the person asked.
const PREVIEW_BODY_CHARS: usize = 600;

/// Arguments of `send_email`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendEmailArgs {
    /// Recipients: bare addresses or contact ids from search_contacts.
    #[schemars(length(min = 1, max = 50))]
    pub to: Vec<String>,
    /// Copy recipients, as `to`.
    #[serde(default)]
    #[schemars(length(max = 50))]
    pub cc: Vec<String>,
    /// The subject, one line (default: the draft's subject when `draft` is sent).
    #[serde(default)]
    #[schemars(length(min = 1, max = 200))]
    pub subject: Option<String>,
    /// The plain-text body; send this or `draft`, not both.
    #[serde(default)]
    #[schemars(length(min = 1, max = 1_000_000))]
    pub body: Option<String>,
    /// A draft handle from generate_email_draft (its text and HTML bodies are sent).
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    pub draft: Option<String>,
    /// Files to attach: handles (`file_...`) search_files gave this session, never paths.
    #[serde(default)]
    #[schemars(length(max = 20))]
    pub attachments: Vec<String>,
}

/// An attachment as sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SentAttachment {
    /// The file's name.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its MIME type.
    #[serde(rename = "type")]
    pub mime_type: String,
}

/// The result of `send_email`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SendEmailOutput {
    /// The message's `Message-ID`, derived from the call's idempotency key.
    pub message_id: String,
    /// Every recipient, `to` then `cc`.
    pub recipients: Vec<String>,
    /// The subject sent.
    pub subject: String,
    /// The attachments sent.
    pub attachments: Vec<SentAttachment>,
    /// The message's size in bytes as sent.
    pub size_bytes: u64,
    /// The server's final reply (`250 ...`).
    pub server_reply: String,
}

/// The `send_email` tool.
#[derive(Debug)]
pub struct SendEmail(Arc<MailState>);

impl SendEmail {
    pub(crate) fn new(state: Arc<MailState>) -> Self {
        SendEmail(state)
    }
}

const DESCRIPTION: &str = "Send one email over the operator's SMTP server. `to`/`cc` take \
bare addresses or contact ids from search_contacts; the body is `body` (plain text) or a \
`draft` handle from generate_email_draft; `attachments` are file handles from search_files \
(paths are refused). A person is usually asked to approve, and shown every recipient and \
attachment. Sending is never repeated: the same call sent again returns the first result \
instead of a second email. Returns {message_id, recipients, subject, attachments, size_bytes, \
server_reply}. If it fails with outcome_unknown, the server may hold the message: do not send \
it again; tell the user, who can check with the message id. Errors that say nothing was sent \
(a refused recipient, a stale handle) can be fixed and sent again.";

/// What a checked call will send.
struct Checked {
    to: Vec<lettre::Address>,
    cc: Vec<lettre::Address>,
    subject: String,
    text: String,
    html: Option<String>,
    files: Vec<FileHandle>,
}

impl SendEmail {
    /// Step 1's checks; see the module docs.
    fn check(&self, args: &SendEmailArgs, ctx: &ToolContext) -> Result<Checked, ToolError> {
        let state = &self.0;
        let (text, html, draft_subject, draft_to) = match (&args.body, &args.draft) {
            (Some(body), None) => (line_feeds_only(body).into_owned(), None, None, None),
            (None, Some(id)) => {
                let d = state.handles.draft(id, ctx.session_id())?;
                let (text, html) = (line_feeds_only(&d.text), line_feeds_only(&d.html));
                let (text, html) = (text.into_owned(), Some(html.into_owned()));
                (text, html, Some(d.subject), Some((id, d.to)))
            }
            _ => {
                return Err(ToolError::invalid_input(
                    "send exactly one of `body` (the text) and `draft` (a handle from \
                     generate_email_draft)",
                )
                .with_reason("body_or_draft"))
            }
        };
        let subject = match (&args.subject, draft_subject) {
            (Some(s), _) => s.clone(),
            (None, Some(s)) => s,
            (None, None) => {
                return Err(ToolError::invalid_input(
                    "a message sent with `body` needs a `subject`",
                )
                .with_reason("missing_subject"))
            }
        };
        crate::draft::check_subject(&subject)?;
        let to = crate::tools::recipients(state, "to", &args.to)?;
        let cc = crate::tools::recipients(state, "cc", &args.cc)?;
        if let Some((id, written_for)) = draft_to {
            check_draft_recipients(id, &written_for, &to)?;
        }
        let ws = ctx.require_workspace()?;
        let max = state.config.max_message_bytes;
        let body = text.len() as u64 + html.as_ref().map_or(0, |h| h.len() as u64);
        if body > max {
            return Err(body_too_large(body, max));
        }
        let mut files = Vec::with_capacity(args.attachments.len());
        let mut total = body;
        for id in &args.attachments {
            let f = state.handles.file(id.trim(), ctx.session_id(), ws)?;
            check_file_name(&f.name)?;
            // base64 grows each 3 bytes to 4, plus line breaks
            total += f.identity.size().div_ceil(3) * 4 * 78 / 76;
            files.push(f);
        }
        if total > max {
            return Err(ToolError::unsafe_input(
                "limit_exceeded",
                format!(
                    "the message would be about {total} bytes with its attachments encoded, over \
                     the {max}-byte limit by {} bytes (the body is {body} bytes, the attachments \
                     about {} encoded); attach fewer or smaller files",
                    total - max,
                    total - body
                ),
            ));
        }
        Ok(Checked {
            to,
            cc,
            subject,
            text,
            html,
            files,
        })
    }
}

/// Refuses a draft sent to other recipients than it was written for: it greets the first
/// of them by name.
///
/// # Errors
/// `invalid_input` with reason `draft_recipients`, naming both lists.
fn check_draft_recipients(
    id: &str,
    written_for: &[String],
    to: &[lettre::Address],
) -> Result<(), ToolError> {
    let sent: Vec<String> = to.iter().map(ToString::to_string).collect();
    let same = written_for.len() == sent.len()
        && to
            .iter()
            .map(crate::address::mailbox_key)
            .all(|a| written_for.iter().any(|w| w.to_lowercase() == a));
    if same {
        return Ok(());
    }
    Err(ToolError::invalid_input(format!(
        "draft {id} was written for {} (it greets them by name), not for {}; send it `to` \
         the recipients it was written for, or call generate_email_draft with these \
         recipients and send the new draft",
        written_for.join(", "),
        sent.join(", ")
    ))
    .with_reason("draft_recipients"))
}

/// Refuses an attachment's file name that could add mail headers or that mail readers would
/// decode into other text.
///
/// # Errors
/// `invalid_input` with reason `header_injection`.
fn check_file_name(name: &str) -> Result<(), ToolError> {
    if has_control(name) {
        return Err(ToolError::invalid_input(format!(
            "the file name {name:?} holds a line break or another control character, which \
             would let it add mail headers; rename the file, or send without it"
        ))
        .with_reason("header_injection"));
    }
    if let Some(c) = crate::text::bidi_override(name) {
        return Err(ToolError::invalid_input(format!(
            "the file name {:?} holds U+{:04X}, a bidirectional override that makes the name \
             read in another order than it is written (`invoice\\u{{202e}}fdp.exe` shows as \
             `invoiceexe.pdf`); rename the file, or send without it",
            toolgate_core::sanitize::clean_output(name),
            c as u32
        ))
        .with_reason("header_injection"));
    }
    if has_encoded_word(name) {
        return Err(ToolError::invalid_input(format!(
            "the file name {name:?} holds an RFC 2047 encoded word (=?...?=), which mail \
             readers would decode into other text; rename the file, or send without it"
        ))
        .with_reason("header_injection"));
    }
    Ok(())
}

/// The error of a body over the cap by itself.
fn body_too_large(body: u64, max: u64) -> ToolError {
    ToolError::unsafe_input(
        "limit_exceeded",
        format!(
            "the body is {body} bytes (its text and HTML), over the {max}-byte limit of a whole \
             message by {} bytes; shorten the body (or send the long text as an attached file)",
            body - max
        ),
    )
}

impl TypedTool for SendEmail {
    type Args = SendEmailArgs;
    type Output = SendEmailOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("send_email")
            .title("Send email")
            .description(DESCRIPTION)
            .effects(Effects {
                read_only: false,
                destructive: true,
                idempotent: false,
                open_world: true,
                concurrency_safe: false,
            })
            .risk(Risk::External)
            .timeout(self.0.config.timeout)
            .tag("mail")
            .example(
                "Send a draft with an attachment",
                serde_json::json!({
                    "to": ["zhang.wei@example.cn"],
                    "draft": "draft_0123456789abcdef",
                    "attachments": ["file_0123456789abcdef"]
                }),
            )
    }

    /// What is sent, whatever handles name it: the sender, the recipients (each list sorted,
    /// each address in lower case),
    /// the subject, the bodies, and each attachment's name, type, size and SHA-256 (sorted),
    /// so the flow run again with new handles for the same draft and files is the same call
    /// to the ledger (a replay, never a second message), and another body is another call.
    fn effect(
        &self,
        args: &SendEmailArgs,
        ctx: &ToolContext,
    ) -> Result<Option<serde_json::Value>, ToolError> {
        let c = self.check(args, ctx)?;
        let ws = ctx.require_workspace()?;
        // one mailbox, however its local part is cased (the domain is lower case already):
        // a retry that writes `Ann@` for `ann@` is the same message, never a second one
        let sorted = |v: &[lettre::Address]| {
            let mut v: Vec<String> = v.iter().map(crate::address::mailbox_key).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let mut attachments = Vec::with_capacity(c.files.len());
        for f in &c.files {
            let digest = self.0.handles.digest(ws, f)?;
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            attachments.push((f.name.clone(), hex, f.mime.clone(), f.identity.size()));
        }
        attachments.sort_unstable();
        Ok(Some(serde_json::json!({
            "from": self.0.from.email.to_string(),
            "to": sorted(&c.to),
            "cc": sorted(&c.cc),
            "subject": c.subject,
            "text": c.text,
            "html": c.html,
            "attachments": attachments
                .into_iter()
                .map(|(name, sha256, mime, size)| serde_json::json!({
                    "name": name, "sha256": sha256, "type": mime, "size": size
                }))
                .collect::<Vec<_>>(),
        })))
    }

    fn guard(&self, args: &SendEmailArgs, ctx: &ToolContext) -> Result<Vec<Resource>, ToolError> {
        let c = self.check(args, ctx)?;
        let mut resources: Vec<Resource> =
            c.to.iter()
                .chain(&c.cc)
                .map(|a| Resource::Recipient {
                    address: a.to_string(),
                })
                .collect();
        resources.extend(
            c.files
                .iter()
                .map(|f| Resource::read(f.rel.to_string_lossy().into_owned())),
        );
        Ok(resources)
    }

    fn preview(
        &self,
        args: &SendEmailArgs,
        ctx: &ToolContext,
    ) -> Result<Option<String>, ToolError> {
        let c = self.check(args, ctx)?;
        let list = |v: &[lettre::Address]| {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = format!("Send an email from {}\n", self.0.from);
        out.push_str(&format!("To: {}\n", list(&c.to)));
        if !c.cc.is_empty() {
            out.push_str(&format!("Cc: {}\n", list(&c.cc)));
        }
        out.push_str(&format!("Subject: {}\n", c.subject));
        if c.files.is_empty() {
            out.push_str("Attachments: none\n");
        } else {
            out.push_str("Attachments:\n");
            for f in &c.files {
                out.push_str(&format!(
                    "  {} ({} bytes, {})\n",
                    f.name,
                    f.identity.size(),
                    f.mime
                ));
            }
        }
        let body: String = c.text.chars().take(PREVIEW_BODY_CHARS).collect();
        out.push_str("Body:\n");
        out.push_str(&body);
        if body.len() < c.text.len() {
            out.push_str("\n[... the body goes on]");
        }
        Ok(Some(out))
    }

    async fn call(
        &self,
        args: SendEmailArgs,
        ctx: ToolContext,
    ) -> Result<SendEmailOutput, ToolError> {
        let c = self.check(&args, &ctx).map_err(ToolError::no_effect)?;
        let ws = ctx.require_workspace()?.clone();
        // the files as they are now, read through the workspace's handle
        let files = c.files.clone();
        let read = tokio::task::spawn_blocking(move || read_files(&ws, &files))
            .await
            .map_err(|_| {
                ToolError::internal("reading the attachments stopped unexpectedly").no_effect()
            })?
            .map_err(ToolError::no_effect)?;
        let state = &self.0;
        let domain = state.from.email.domain().to_string();
        let message_id = match ctx.idempotency_key() {
            Some(key) => smtp::message_id(key, &domain),
            None => smtp::message_id(&format!("{:032x}", rand::random::<u128>()), &domain),
        };
        let message = build(state, &c, &read, &message_id).map_err(ToolError::no_effect)?;
        let bytes = message.formatted();
        let max = state.config.max_message_bytes;
        if bytes.len() as u64 > max {
            let body = c.text.len() as u64 + c.html.as_ref().map_or(0, |h| h.len() as u64);
            let attached: u64 = c.files.iter().map(|f| f.identity.size()).sum();
            let advice = if attached == 0 {
                "shorten the body"
            } else {
                "attach fewer or smaller files, or shorten the body"
            };
            return Err(ToolError::unsafe_input(
                "limit_exceeded",
                format!(
                    "the message is {} bytes as encoded (a body of {body} bytes, attachments of \
                     {attached} bytes before encoding), over the {max}-byte limit by {} bytes; \
                     {advice}",
                    bytes.len(),
                    bytes.len() as u64 - max
                ),
            )
            .no_effect());
        }
        let by = smtp::Deadlines::within(ctx.time_left().min(state.config.timeout));
        let tls = state.tls.0.as_ref();
        match smtp::send(&state.config, tls, message.envelope(), &bytes, by).await {
            Ok(reply) => Ok(SendEmailOutput {
                message_id,
                recipients: c.to.iter().chain(&c.cc).map(ToString::to_string).collect(),
                subject: c.subject,
                attachments: c
                    .files
                    .iter()
                    .map(|f| SentAttachment {
                        name: f.name.clone(),
                        size: f.identity.size(),
                        mime_type: f.mime.clone(),
                    })
                    .collect(),
                size_bytes: bytes.len() as u64,
                server_reply: reply,
            }),
            Err(Failure::NotSent { message, cause }) => {
                let (reason, advice) = match cause {
                    Cause::Auth => ("smtp_auth_failed", "nothing was sent; the operator must fix the mail credentials, sending again will not help"),
                    Cause::Tls => ("smtp_tls_failed", "nothing was sent; the operator must fix the mail server's TLS settings, sending again will not help"),
                    Cause::Refused { permanent: true } => ("smtp_refused", "nothing was sent; fix what the server refused (a recipient's address) before sending again"),
                    Cause::Refused { permanent: false } | Cause::Unavailable => (
                        "smtp_unavailable",
                        "nothing was sent; it may be sent again later",
                    ),
                };
                Err(ToolError::failed(format!("{message}; {advice}"))
                    .with_reason(reason)
                    .no_effect())
            }
            Err(Failure::Unknown(message)) => Err(ToolError::new(
                ErrorKind::OutcomeUnknown,
                format!(
                    "{message}. The server may hold the message {message_id}: do not send it \
                     again; tell the user, who can look for that Message-ID"
                ),
            )
            .with_reason("smtp_no_final_reply")),
        }
    }
}

/// Each file's bytes, read through the workspace's handle, each checked to be the file its
/// handle was given for (identity before and after the read).
fn read_files(
    ws: &toolgate_core::Workspace,
    files: &[FileHandle],
) -> Result<Vec<Vec<u8>>, ToolError> {
    let stale = |f: &FileHandle| {
        ToolError::invalid_input(format!(
            "the file {} changed while it was being attached; call search_files again and send \
             the new handle",
            f.name
        ))
        .with_reason("stale_handle")
    };
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        if Identity::of(ws, &f.rel) != Some(f.identity) {
            return Err(stale(f));
        }
        let file = ws
            .dir()
            .open(&f.rel)
            .map_err(|e| toolgate_core::workspace::io_error(&f.name, &e))?;
        // What was opened, not what the name leads to now: a name swapped between the check
        // above and the open leads to another inode, refused here.
        let opened = file
            .metadata()
            .map_err(|e| toolgate_core::workspace::io_error(&f.name, &e))?;
        if Identity::of_metadata(ws, &f.rel, &opened) != Some(f.identity) {
            return Err(stale(f));
        }
        let mut bytes = Vec::with_capacity(f.identity.size() as usize);
        file.into_std()
            .take(f.identity.size() + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| toolgate_core::workspace::io_error(&f.name, &e))?;
        if bytes.len() as u64 != f.identity.size() || Identity::of(ws, &f.rel) != Some(f.identity) {
            return Err(stale(f));
        }
        out.push(bytes);
    }
    Ok(out)
}

/// The message: `From`, `To`, `Cc`, `Subject`, `Date`, `Message-ID`; a plain-text body (with
/// its HTML alternative for a draft); each attachment with its MIME type.
fn build(
    state: &MailState,
    c: &Checked,
    files: &[Vec<u8>],
    message_id: &str,
) -> Result<lettre::Message, ToolError> {
    let mut b = lettre::Message::builder()
        .from(state.from.clone())
        .subject(c.subject.clone())
        .message_id(Some(message_id.to_string()))
        .date_now();
    for a in &c.to {
        b = b.to(Mailbox::new(None, a.clone()));
    }
    for a in &c.cc {
        b = b.cc(Mailbox::new(None, a.clone()));
    }
    let text = SinglePart::plain(c.text.clone());
    let body = match &c.html {
        Some(html) => MultiPart::alternative()
            .singlepart(text)
            .singlepart(SinglePart::html(html.clone())),
        None => MultiPart::mixed().singlepart(text),
    };
    let message = if files.is_empty() && c.html.is_none() {
        b.singlepart(SinglePart::plain(c.text.clone()))
    } else if files.is_empty() {
        b.multipart(body)
    } else {
        let mut mixed = MultiPart::mixed().multipart(body);
        for (f, bytes) in c.files.iter().zip(files) {
            let ct = ContentType::parse(&f.mime)
                .unwrap_or_else(|_| ContentType::parse("application/octet-stream").unwrap());
            mixed = mixed.singlepart(Attachment::new(f.name.clone()).body(bytes.clone(), ct));
        }
        b.multipart(mixed)
    };
    message.map_err(|e| {
        ToolError::invalid_input(format!("the message cannot be built: {e}"))
            .with_reason("invalid_message")
    })
}
