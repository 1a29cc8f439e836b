//! Counting HTTP requests in flight until their response bodies are sent, so a shutdown waits
//! for the answers of calls in flight, not only for the calls. `GET` (the standalone SSE
//! stream, open for the whole session) is not counted.

use crate::inflight::{InFlight, OwnedGuard};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The axum middleware.
pub(crate) async fn middleware(
    State(requests): State<Arc<InFlight>>,
    req: Request,
    next: Next,
) -> Response {
    if req.method() == http::Method::GET {
        return next.run(req).await;
    }
    let guard = requests.enter_owned();
    let response = next.run(req).await;
    response.map(|inner| {
        Body::new(Tracked {
            inner,
            _guard: guard,
        })
    })
}

/// A response body that holds its request's guard until it is done or dropped.
struct Tracked {
    inner: Body,
    _guard: OwnedGuard,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
