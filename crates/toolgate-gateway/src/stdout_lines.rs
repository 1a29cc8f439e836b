//! A stdio upstream's output on its way to rmcp: a request that rmcp would drop unanswered
//! is turned into one it answers with an error.
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
//! came, in order; a line over [`MAX_LINE`] passes in pieces for rmcp to drop.
//!
//! The cost: each line is copied once more (into the pipe rmcp reads), and a line naming a
//! `method` (requests and notifications of the upstream, rare beside responses) is scanned
//! once more.

use crate::connect::MAX_LINE;
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};

/// The method a request rmcp could not read is renamed to.
pub(crate) const UNREADABLE: &str = "toolgate/unreadable";

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
            let sent = match unreadable(&line) {
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
    let e = serde_json::from_slice::<ServerJsonRpcMessage>(line).err()?;
    if !matches!(
        e.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    ) {
        return None;
    }
    let mut rewritten = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": UNREADABLE,
        "params": {"method": method, "why": e.to_string()},
    }))
    .ok()?;
    rewritten.push(b'\n');
    Some(rewritten)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

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
