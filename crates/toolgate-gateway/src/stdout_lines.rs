//! A stdio upstream's output on its way to rmcp: a request that rmcp would drop unanswered
//! is turned into one it answers with an error. An HTTP upstream's events get the same
//! rewrite ([`rewrite`], from `http_client.rs`).
//!
//! rmcp's line reader ignores a line serde_json reports as a syntax error (rust-sdk issue
//! 938: no id to answer), which includes a well-formed request holding a lone UTF-16
//! surrogate escape (`"\ud800"`) or nested deeper than serde_json's 128 levels: the upstream
//! waits for an answer that never comes, its call runs to its timeout and its breaker opens.
//! So each line goes through a task first ([`forward`]); one that names a `method` is read
//! shallowly (its `id` and `method`, the rest skipped without recursion) and, when it is a
//! request, as rmcp reads it; one rmcp cannot read for its syntax goes on as
//! `{"jsonrpc": "2.0", "id": <its id>, "method": "toolgate/unreadable", "params":
//! {"method": <its method>, "why": <serde_json's message>}}`, which the upstream's handler
//! answers with `-32600` saying why (`relay/unreadable.rs`). Every other byte passes as it
//! came, in order. A line over [`MAX_LINE`], which rmcp would drop (leaving its call to wait
//! for its timeout), is not passed on: an answer among them gets a JSON-RPC error for its id
//! (`-32603`, saying how long it was), found at the line's top level in its first or last
//! 64 KiB, so its call ends at once with the upstream's error.
//!
//! Nor is an answer (a line with an `id` and no `method`) left to make its call wait for its
//! timeout: a lone UTF-16 surrogate escape in any line not rewritten as above (an answer, a
//! notification; a JavaScript server cutting a string inside an emoji writes one) is replaced
//! by `\ufffd`, U+FFFD, in place, as invalid UTF-8 is read elsewhere; an answer nested deeper
//! than serde_json reads goes on as a JSON-RPC error for its id (`-32603`, saying why), which
//! ends its call with the upstream's error at once.
//!
//! The cost: each line is copied once more (into the pipe rmcp reads), and a line naming a
//! `method` (requests and notifications of the upstream, rare beside responses) is scanned
//! once more; an answer is searched for `\ud` and `\uD` and, only when it has more than
//! [`DEEP`] opening brackets, for its depth.

use crate::connect::MAX_LINE;
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};

/// The method a request rmcp could not read is renamed to.
pub(crate) const UNREADABLE: &str = "toolgate/unreadable";

/// An answer nested deeper than this is parsed as rmcp would, to see whether it can be read
/// (serde_json reads at most 127 levels).
const DEEP: usize = 120;

/// Bytes the pipe to rmcp buffers.
const PIPE: usize = 64 << 10;
/// A line buffer grown past this (by a long line) is given back after its line.
const KEEP_CAPACITY: usize = 1 << 20;

/// The members of a message that say whether it is a request (the others are skipped,
/// without recursion).
#[derive(Deserialize)]
struct Probe {
    id: Option<RequestId>,
    method: Option<String>,
}

/// `output` (the upstream's stdout) as rmcp should read it; the forwarding task ends at its
/// end or when rmcp stops reading.
pub(crate) fn forward<R: AsyncRead + Unpin + Send + 'static>(output: R) -> impl AsyncRead {
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(PIPE);
    tokio::spawn(async move {
        let mut output = BufReader::new(output);
        let mut to_rmcp = to_rmcp;
        let mut line = Vec::new();
        // the first and last bytes of a line past MAX_LINE, while it is read (not passed on)
        let mut overlong: Option<Overlong> = None;
        loop {
            line.clear();
            match (&mut output)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .await
            {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let ends = line.last() == Some(&b'\n');
            if overlong.is_some() || (!ends && line.len() > MAX_LINE) {
                let o = overlong.get_or_insert_with(Overlong::default);
                o.take(&line);
                if !ends {
                    continue;
                }
                // the line ended: its id answered with an error, so its call ends at once
                let answer = overlong.take().and_then(|o| o.answer());
                if let Some(answer) = answer {
                    if to_rmcp.write_all(&answer).await.is_err() {
                        break;
                    }
                }
                continue;
            }
            let sent = match rewrite(&mut line) {
                Some(rewritten) => to_rmcp.write_all(&rewritten).await,
                None => to_rmcp.write_all(&line).await,
            };
            if sent.is_err() {
                break;
            }
            if line.capacity() > KEEP_CAPACITY {
                line = Vec::new();
            }
        }
        let _ = to_rmcp.shutdown().await;
    });
    rmcp_reads
}

/// Bytes of an overlong line's start and end kept to find its id.
const ENDS: usize = 64 << 10;

/// A line longer than [`MAX_LINE`] as it is read: its first and last [`ENDS`] bytes. rmcp
/// would drop it (its line limit), leaving the call it answers to wait for its timeout; it
/// is not passed on, and an answer's id gets a JSON-RPC error in its place.
#[derive(Default)]
struct Overlong {
    head: Vec<u8>,
    tail: Vec<u8>,
    len: usize,
}

impl Overlong {
    fn take(&mut self, piece: &[u8]) {
        self.len += piece.len();
        if self.head.len() < ENDS {
            let n = (ENDS - self.head.len()).min(piece.len());
            self.head.extend_from_slice(&piece[..n]);
        }
        self.tail
            .extend_from_slice(&piece[piece.len().saturating_sub(ENDS)..]);
        if self.tail.len() > ENDS {
            self.tail.drain(..self.tail.len() - ENDS);
        }
    }

    /// The error line answering the line's id, when it is an answer whose id can be found
    /// at its top level: a member among the first [`ENDS`] bytes (`{"jsonrpc": "2.0", "id":
    /// 7, "result": ...`, Python's order), or its last member (`..., "id": 7}`, the
    /// TypeScript SDK's). `None` for a request or notification (a `method` member) or an id
    /// not found so.
    fn answer(&self) -> Option<Vec<u8>> {
        let (id, method) = top_level_id(&self.head);
        if method {
            tracing::warn!(
                bytes = self.len,
                "an upstream request or notification past the line limit was dropped"
            );
            return None;
        }
        let id = id.or_else(|| last_member_id(&self.tail));
        let Some(id) = id else {
            tracing::warn!(
                bytes = self.len,
                "an upstream line past the line limit was dropped: no id found"
            );
            return None;
        };
        error_line(
            id,
            &format!(
                "the upstream's answer is {} bytes long, more than the {MAX_LINE} bytes a stdio \
                 message may hold",
                self.len
            ),
        )
    }
}

/// The `id` of the JSON object starting `head` when a top-level member names it within
/// `head` (a number or a string), and whether a top-level `method` member comes before the
/// scan ends. Strings and nesting are followed, so an `"id"` inside the result is not taken.
fn top_level_id(head: &[u8]) -> (Option<RequestId>, bool) {
    let (mut depth, mut i) = (0usize, 0usize);
    let mut method = false;
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i + 1;
                let Some(end) = string_end(head, start) else {
                    break;
                };
                i = end + 1;
                if depth != 1 {
                    continue;
                }
                let after = skip_ws(head, i);
                if head.get(after) != Some(&b':') {
                    continue;
                }
                match &head[start..end] {
                    b"method" => method = true,
                    b"id" => return (value_id(&head[skip_ws(head, after + 1)..]), method),
                    _ => {}
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    (None, method)
}

/// The id of a top-level object whose text ends `tail` with its `"id"` member last.
fn last_member_id(tail: &[u8]) -> Option<RequestId> {
    let mut end = tail.len();
    while end > 0 && tail[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    if end == 0 || tail[end - 1] != b'}' {
        return None;
    }
    let body = &tail[..end - 1];
    let at = memchr::memmem::rfind(body, b"\"id\"")?;
    // what comes before is a member separator: `,"id":7}` (after a value at the top level)
    let before = body[..at].iter().rev().find(|b| !b.is_ascii_whitespace());
    if before != Some(&b',') {
        return None;
    }
    let colon = skip_ws(body, at + 4);
    if body.get(colon) != Some(&b':') {
        return None;
    }
    let value = &body[skip_ws(body, colon + 1)..];
    let id = value_id(value)?;
    // nothing may follow the value but blanks: it is the last member
    let text = serde_json::to_vec(&id).ok()?;
    let rest = value.strip_prefix(text.as_slice())?;
    rest.iter().all(u8::is_ascii_whitespace).then_some(id)
}

/// The JSON-RPC id (a number or a string) at the start of `text`.
fn value_id(text: &[u8]) -> Option<RequestId> {
    let len = match text.first()? {
        b'"' => string_end(text, 1)? + 1,
        b'-' | b'0'..=b'9' => text
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b'-'))
            .unwrap_or(text.len()),
        _ => return None,
    };
    serde_json::from_slice(&text[..len]).ok()
}

/// Where the JSON string whose text starts at `start` ends (its closing quote).
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// One message (a line of a stdio upstream, the data of an HTTP upstream's event) as rmcp can
/// read it: `None` when it passes as it is (after lone surrogate escapes were replaced in
/// place), else the message to pass instead, as a line (see the module's documentation).
pub(crate) fn rewrite(line: &mut [u8]) -> Option<Vec<u8>> {
    unreadable(line)
        .or_else(|| unreadable_answer(line))
        .or_else(|| ambiguous_answer(line))
}

/// The members of an answer that say whether it is one (the others are skipped).
#[derive(Deserialize)]
struct AnswerProbe {
    id: Option<RequestId>,
    method: Option<serde::de::IgnoredAny>,
    result: Option<serde::de::IgnoredAny>,
    error: Option<serde::de::IgnoredAny>,
}

/// For an answer holding both `result` and `error` (JSON-RPC 2.0 section 5: exactly one of
/// them), which rmcp drops and so leaves its call to wait for its timeout: the JSON-RPC error
/// that answers its id instead. Looked at only when both names appear in the line.
fn ambiguous_answer(line: &[u8]) -> Option<Vec<u8>> {
    memchr::memmem::find(line, b"\"result\"")?;
    memchr::memmem::find(line, b"\"error\"")?;
    let Ok(AnswerProbe {
        id: Some(id),
        method: None,
        result: Some(_),
        error: Some(_),
    }) = serde_json::from_slice(line)
    else {
        return None;
    };
    error_line(
        id,
        "the upstream's answer held both a result and an error, which JSON-RPC 2.0 does not \
         allow (section 5), so neither is taken",
    )
}

/// The JSON-RPC error (`-32603`, internal error) that answers `id` in place of an answer rmcp
/// would drop, as one line.
fn error_line(id: RequestId, message: &str) -> Option<Vec<u8>> {
    line_of(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32603, "message": message},
    }))
}

/// `line` rewritten as the `toolgate/unreadable` request, when it is a request rmcp could not
/// read for its syntax.
fn unreadable(line: &[u8]) -> Option<Vec<u8>> {
    memchr::memmem::find(line, b"\"method\"")?;
    let Probe {
        id: Some(id),
        method: Some(method),
        ..
    } = serde_json::from_slice(line).ok()?
    else {
        return None;
    };
    let e = syntax_error(line)?;
    line_of(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": UNREADABLE,
        "params": {"method": method, "why": e.to_string()},
    }))
}

/// Why rmcp cannot read `line`, when that is its syntax (serde_json's `Syntax` or `Eof`
/// category: a lone surrogate escape, nesting past its limit), not its shape.
fn syntax_error(line: &[u8]) -> Option<serde_json::Error> {
    let e = serde_json::from_slice::<ServerJsonRpcMessage>(line).err()?;
    matches!(
        e.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    )
    .then_some(e)
}

/// `message` as one line of newline-delimited JSON.
fn line_of(message: &serde_json::Value) -> Option<Vec<u8>> {
    let mut line = serde_json::to_vec(message).ok()?;
    line.push(b'\n');
    Some(line)
}

/// For a line not rewritten as a request: its lone surrogate escapes replaced in place (see
/// [`repair_lone_surrogates`]); and, for an answer (an `id`, no `method`) rmcp could not read
/// for its depth, the JSON-RPC error that answers its id instead.
fn unreadable_answer(line: &mut [u8]) -> Option<Vec<u8>> {
    if memchr::memmem::find(line, b"\\ud").is_some()
        || memchr::memmem::find(line, b"\\uD").is_some()
    {
        repair_lone_surrogates(line);
    }
    if memchr::memchr2_iter(b'[', b'{', line).nth(DEEP).is_none() || !deeper_than(line, DEEP) {
        return None;
    }
    let Ok(Probe {
        id: Some(id),
        method: None,
    }) = serde_json::from_slice(line)
    else {
        return None;
    };
    let e = syntax_error(line)?;
    error_line(
        id,
        &format!(
            "the upstream's answer could not be read ({e}): it is nested deeper than 127 levels"
        ),
    )
}

/// The four hex digits at `at` as a number (`None` unless all four are hex digits).
fn hex4(line: &[u8], at: usize) -> Option<u16> {
    line.get(at..at + 4)?.iter().try_fold(0u16, |n, &b| {
        let d = (b as char).to_digit(16)?;
        Some(n << 4 | d as u16)
    })
}

/// Replaces each `\uXXXX` escape of a UTF-16 surrogate that is not half of a pair (a high
/// one not followed by a low one, a low one not after a high one) by `\ufffd`, the same six
/// bytes, so the line stays JSON that serde_json reads. Backslashes are taken two bytes at a
/// time, so `\\ud800` (a backslash, then text) is left alone.
fn repair_lone_surrogates(line: &mut [u8]) {
    const HIGH: std::ops::Range<u16> = 0xD800..0xDC00;
    const LOW: std::ops::Range<u16> = 0xDC00..0xE000;
    let mut i = 0;
    while let Some(off) = line.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        let at = i + off;
        if line.get(at + 1) != Some(&b'u') {
            i = at + 2;
            continue;
        }
        i = at + 6;
        let Some(unit) = hex4(line, at + 2) else {
            continue;
        };
        if HIGH.contains(&unit) {
            let paired = line.get(at + 6..at + 8) == Some(b"\\u")
                && hex4(line, at + 8).is_some_and(|low| LOW.contains(&low));
            if paired {
                i = at + 12;
                continue;
            }
        } else if !LOW.contains(&unit) {
            continue;
        }
        line[at + 2..at + 6].copy_from_slice(b"fffd");
    }
}

/// Whether the JSON text `line` nests arrays and objects more than `limit` deep (strings
/// skipped, escapes two bytes at a time).
fn deeper_than(line: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                i += 1;
                loop {
                    let Some(off) = line.get(i..).and_then(|r| memchr::memchr2(b'"', b'\\', r))
                    else {
                        return false;
                    };
                    let at = i + off;
                    if line[at] == b'"' {
                        i = at + 1;
                        break;
                    }
                    // an escape: the byte after the backslash is never the string's end
                    i = at + 2;
                }
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn an_overlong_answers_id_is_found_at_its_top_level_only() {
        let (id, method) = top_level_id(br#"{"jsonrpc":"2.0","id":7,"result":{"content":"#);
        assert_eq!((id, method), (Some(RequestId::Number(7)), false));
        // an `id` inside the result is not the answer's
        let (id, _) = top_level_id(br#"{"result":{"id":3,"x":""id":4","#);
        assert_eq!(id, None);
        assert!(top_level_id(br#"{"jsonrpc":"2.0","method":"notifications/message","params":"#).1);
        assert_eq!(
            last_member_id(br#"aaa"}]},"jsonrpc":"2.0","id":"c-9"}"#),
            Some(RequestId::String("c-9".into()))
        );
        // quotes inside a string are escaped: `\"id\"` is text, not a member
        assert_eq!(last_member_id(br#"aaa\"},\"id\":5"}"#), None);
        assert_eq!(last_member_id(br#"x":{"id":5}}"#), None);
        assert_eq!(last_member_id(br#"x","id":5,"y":1}"#), None);
    }

    /// A line past the limit is not passed on; an answer's id gets an error at once, in
    /// either member order, and the next line passes as it came.
    #[tokio::test]
    async fn an_answer_past_the_line_limit_ends_its_call_at_once() {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let body = "a".repeat(MAX_LINE + 10);
        let (mut upstream, output) = tokio::io::duplex(1 << 20);
        let read = forward(output);
        let writer = tokio::spawn(async move {
            for line in [
                format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{body}"}}}}"#),
                format!(r#"{{"result":{{"text":"{body}","id":9}},"jsonrpc":"2.0","id":2}}"#),
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/message","params":"{body}"}}"#
                ),
                r#"{"jsonrpc":"2.0","id":3,"result":{}}"#.to_string(),
            ] {
                upstream.write_all(line.as_bytes()).await.unwrap();
                upstream.write_all(b"\n").await.unwrap();
            }
        });
        let mut lines = tokio::io::BufReader::new(read).lines();
        let mut got = Vec::new();
        while let Some(l) = lines.next_line().await.unwrap() {
            got.push(serde_json::from_str::<Value>(&l).unwrap());
            if got.len() == 3 {
                break;
            }
        }
        writer.await.unwrap();
        assert_eq!(got[0]["id"], 1);
        assert_eq!(got[0]["error"]["code"], -32603);
        assert!(got[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bytes long"));
        assert_eq!(got[1]["id"], 2);
        assert_eq!(got[1]["error"]["code"], -32603);
        assert_eq!(
            got[2],
            serde_json::json!({"jsonrpc":"2.0","id":3,"result":{}})
        );
    }

    fn rewritten(line: &str) -> Option<Value> {
        unreadable(line.as_bytes()).map(|r| serde_json::from_slice(&r).unwrap())
    }

    #[test]
    fn a_request_rmcp_cannot_read_keeps_its_id_and_says_why() {
        let lone = r#"{"jsonrpc":"2.0","id":"a-1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"x\ud800"}}],"maxTokens":5}}"#;
        let got = rewritten(lone).expect("rewritten");
        assert_eq!(got["id"], "a-1");
        assert_eq!(got["method"], UNREADABLE);
        assert_eq!(got["params"]["method"], "sampling/createMessage");
        assert!(
            got["params"]["why"]
                .as_str()
                .is_some_and(|w| w.contains("escape")),
            "{got}"
        );
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{{"x":{}1{}}}}}"#,
            "[".repeat(5000),
            "]".repeat(5000)
        );
        let got = rewritten(&deep).expect("rewritten");
        assert_eq!(got["id"], 7);
        assert!(
            got["params"]["why"]
                .as_str()
                .is_some_and(|w| w.contains("recursion")),
            "{got}"
        );
    }

    #[test]
    fn an_answer_with_both_a_result_and_an_error_is_an_error_for_its_id() {
        let rewritten = |line: &str| {
            rewrite(&mut line.as_bytes().to_vec())
                .map(|r| serde_json::from_slice::<Value>(&r).unwrap())
        };
        let got = rewritten(
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]},"error":{"code":1,"message":"x"}}"#,
        )
        .unwrap();
        assert_eq!(got["id"], 7);
        assert_eq!(got["error"]["code"], -32603);
        assert!(got.get("result").is_none(), "{got}");
        // the names inside text, or one of them alone, change nothing
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"\"error\": 1"}]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"\"result\""}}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":{"result":1,"error":2}}"#,
        ] {
            assert!(rewritten(line).is_none(), "{line}");
        }
    }

    #[test]
    fn everything_else_passes_as_it_came() {
        for line in [
            // responses, notifications, readable requests, broken JSON: rmcp's to handle
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x\ud800"}]}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"maxTokens":"5"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"#,
            "not json at all \"method\"",
        ] {
            assert!(rewritten(line).is_none(), "{line}");
        }
    }

    fn answered(line: &str) -> (String, Option<Value>) {
        let mut bytes = line.as_bytes().to_vec();
        let rewritten = unreadable_answer(&mut bytes).map(|r| serde_json::from_slice(&r).unwrap());
        (String::from_utf8(bytes).unwrap(), rewritten)
    }

    #[test]
    fn a_lone_surrogate_in_an_answer_becomes_the_replacement_character() {
        for (line, want) in [
            (
                r#"{"id":1,"result":{"t":"ab\ud83d"}}"#,
                r#"{"id":1,"result":{"t":"ab\ufffd"}}"#,
            ),
            (
                r#"{"id":1,"result":{"t":"\uDC00x"}}"#,
                r#"{"id":1,"result":{"t":"\ufffdx"}}"#,
            ),
            (
                r#"{"id":1,"result":{"t":"\ud800\ud800\udc00"}}"#,
                r#"{"id":1,"result":{"t":"\ufffd\ud800\udc00"}}"#,
            ),
            // a pair, an escaped backslash before text, a short escape at the end: unchanged
            (
                r#"{"id":1,"result":{"t":"\ud83d\ude00"}}"#,
                r#"{"id":1,"result":{"t":"\ud83d\ude00"}}"#,
            ),
            (
                r#"{"id":1,"result":{"t":"\\ud800"}}"#,
                r#"{"id":1,"result":{"t":"\\ud800"}}"#,
            ),
            (
                r#"{"id":1,"result":{"t":"\ud8"#,
                r#"{"id":1,"result":{"t":"\ud8"#,
            ),
            // not four hex digits: no escape this reads
            (
                r#"{"id":1,"result":{"t":"\u+d80"}}"#,
                r#"{"id":1,"result":{"t":"\u+d80"}}"#,
            ),
        ] {
            let (got, rewritten) = answered(line);
            assert_eq!(got, want);
            assert!(rewritten.is_none());
        }
        let (got, _) = answered(
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x\ud800"}]}}"#,
        );
        let read: ServerJsonRpcMessage = serde_json::from_str(&got).expect("rmcp reads it now");
        assert!(serde_json::to_string(&read).unwrap().contains('\u{fffd}'));
    }

    #[test]
    fn an_answer_too_deep_to_read_is_an_error_for_its_id() {
        let deep = |n: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":"c-7","result":{{"structuredContent":{{"x":{}1{}}},"content":[]}}}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        let (_, rewritten) = answered(&deep(500));
        let e = rewritten.expect("answered");
        assert_eq!(e["id"], "c-7");
        assert_eq!(e["error"]["code"], -32603);
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("127 levels"),
            "{e}"
        );
        // rmcp reads 120 levels: passed as it came
        assert_eq!(answered(&deep(120)).1, None);
        // brackets in strings do not count
        let quoted = format!(
            r#"{{"id":1,"result":{{"t":"{}\"{}"}}}}"#,
            "[".repeat(300),
            "{".repeat(300)
        );
        assert_eq!(answered(&quoted).1, None);
        assert!(!deeper_than(b"\"unterminated [[[[", 1));
        assert!(!deeper_than(b"\"ends in a backslash \\", 1));
    }

    #[test]
    fn no_line_of_these_bytes_makes_the_answer_scan_panic() {
        // every line of up to 14 bytes over the characters the scans look at, by a fixed
        // generator: escapes cut anywhere, quotes and brackets in any order
        const ALPHABET: &[u8] = br#"\ud8cfDC0"[{]}"#;
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 15) as usize;
            let mut line: Vec<u8> = (0..len)
                .map(|i| ALPHABET[((x >> (i * 4)) % ALPHABET.len() as u64) as usize])
                .collect();
            let before = line.len();
            let _ = deeper_than(&line, 2);
            let _ = unreadable_answer(&mut line);
            assert_eq!(line.len(), before);
        }
    }

    #[tokio::test]
    async fn the_pipe_carries_every_line_in_order_and_ends_with_the_output() {
        let lone = r#"{"jsonrpc":"2.0","id":9,"method":"x/y","params":{"t":"\udc00"}}"#;
        let input = format!("{{\"a\":1}}\n{lone}\nlast without newline");
        let mut out = forward(std::io::Cursor::new(input.into_bytes()));
        let mut got = String::new();
        out.read_to_string(&mut got).await.unwrap();
        let lines: Vec<&str> = got.split('\n').collect();
        assert_eq!(lines[0], "{\"a\":1}");
        assert!(
            lines[1].contains(UNREADABLE) && lines[1].contains("\"id\":9"),
            "{got}"
        );
        assert_eq!(lines[2], "last without newline");
    }
}
