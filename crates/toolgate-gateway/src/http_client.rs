//! The client of an HTTP upstream: reqwest's, as rmcp drives it, with every server-sent event
//! mended before rmcp reads it.
//!
//! rmcp parses each SSE event's `data` as one JSON-RPC message; serde_json refuses a lone
//! UTF-16 surrogate escape (`"\ud83d"`, which a JavaScript server cutting a string inside an
//! emoji writes) and nesting past 128 levels, and rmcp then fails the whole response: the call
//! ends `outcome_unknown` though the upstream answered. [`Mending`] passes every event through
//! the same rewrite as a stdio upstream's lines ([`crate::stdout_lines::rewrite`]): a lone
//! surrogate read as U+FFFD in place, an answer nested too deep turned into a JSON-RPC error
//! for its id, a request rmcp cannot read into one it answers with an error. Everything else
//! (the requests sent, sessions, limits, errors) is reqwest's client as rmcp implements it.
//!
//! What remains: an upstream that answers a POST with a single JSON body
//! (`application/json`, not an event stream) is parsed inside rmcp's client before any of
//! this sees it, so such an answer still fails its call.

use futures::stream::{BoxStream, StreamExt};
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

type Events = BoxStream<'static, Result<Sse, SseError>>;
type Posted = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// reqwest's client for rmcp's streamable HTTP transport, with each event's data mended (see
/// the module's documentation).
#[derive(Clone)]
pub(crate) struct Mending(pub(crate) reqwest::Client);

impl StreamableHttpClient for Mending {
    type Error = reqwest::Error;

    fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Posted> + Send + '_ {
        let posted = self
            .0
            .post_message(uri, message, session_id, auth_header, custom_headers);
        async move { posted.await.map(mend_response) }
    }

    fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = Posted> + Send + '_ {
        let posted = self.0.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        async move { posted.await.map(mend_response) }
    }

    fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> impl Future<Output = Posted> + Send + '_ {
        let posted = self.0.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        );
        async move { posted.await.map(mend_response) }
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<reqwest::Error>>> + Send + '_ {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<Events, StreamableHttpError<reqwest::Error>>> + Send + '_ {
        let opened = self
            .0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers);
        async move { opened.await.map(mend_events) }
    }

    fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = Result<Events, StreamableHttpError<reqwest::Error>>> + Send + '_ {
        let opened = self.0.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        async move { opened.await.map(mend_events) }
    }
}

fn mend_response(response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
    match response {
        StreamableHttpPostResponse::Sse(events, session) => {
            StreamableHttpPostResponse::Sse(mend_events(events), session)
        }
        other => other,
    }
}

fn mend_events(events: Events) -> Events {
    events
        .map(|event| {
            event.map(|mut sse| {
                if let Some(data) = sse.data.as_mut() {
                    mend(data);
                }
                sse
            })
        })
        .boxed()
}

/// One event's data rewritten as rmcp can read it, when it cannot (see the module's doc).
fn mend(data: &mut String) {
    let mut bytes = std::mem::take(data).into_bytes();
    if let Some(mut rewritten) = crate::stdout_lines::rewrite(&mut bytes) {
        // a line of newline-delimited JSON: the event's data is the message alone
        if rewritten.last() == Some(&b'\n') {
            rewritten.pop();
        }
        bytes = rewritten;
    }
    // the rewrites change ASCII bytes to ASCII bytes or write JSON: still UTF-8
    *data = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ServerJsonRpcMessage;

    fn mended(s: &str) -> String {
        let mut data = s.to_string();
        mend(&mut data);
        data
    }

    #[test]
    fn events_rmcp_cannot_read_are_mended_and_the_rest_kept_as_sent() {
        let lone = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"cut \ud83d"}]}}"#;
        let m = mended(lone);
        assert!(m.contains(r"cut \ufffd"), "{m}");
        assert!(
            serde_json::from_str::<ServerJsonRpcMessage>(&m).is_ok(),
            "{m}"
        );

        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"d","result":{{"content":[],"structuredContent":{{"x":{}{}}}}}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        let m = mended(&deep);
        let v: serde_json::Value = serde_json::from_str(&m).unwrap();
        assert_eq!(v["id"], "d", "{m}");
        assert_eq!(v["error"]["code"], -32603, "{m}");
        assert!(
            serde_json::from_str::<ServerJsonRpcMessage>(&m).is_ok(),
            "{m}"
        );

        for kept in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\ud83d\ude00 caf\u00e9 \\ud800"}]}}"#,
            "",
            "not json at all \u{1F600}",
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
        ] {
            assert_eq!(mended(kept), kept);
        }
    }
}
