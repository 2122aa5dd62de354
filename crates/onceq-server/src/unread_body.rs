//! `Connection: close` on answers given before the request's body was read.
//!
//! A 401, 403, 413 or 503 can be decided from the headers alone, and then
//! the body is never read. The connection cannot serve another request
//! (the unread body is still on it), and hyper closes it after the answer —
//! but without saying so, a keep-alive client sent its next request on it
//! and got a broken pipe. Saying `Connection: close` makes it open a new one.

use std::{
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
};

use axum::http::{HeaderValue, Request, Response, header};
use hyper::body::{Body, Frame, SizeHint};

/// A request body that records whether it was read to its end.
#[derive(Debug)]
pub struct Tracked<B> {
    inner: B,
    ended: Arc<AtomicBool>,
}

/// Whether a tracked body was read to its end, asked after the answer.
#[derive(Debug, Clone)]
pub struct Ended(Option<Arc<AtomicBool>>);

/// Wraps `request`'s body when it has one (a GET's is not tracked: nothing
/// to read, no allocation).
pub fn track<B: Body>(request: Request<B>) -> (Request<Tracked<B>>, Ended) {
    let has_body = !request.body().is_end_stream();
    let ended = Arc::new(AtomicBool::new(!has_body));
    let watch = Ended(has_body.then(|| ended.clone()));
    (request.map(|inner| Tracked { inner, ended }), watch)
}

impl Ended {
    /// Adds `Connection: close` to `response` when the body was not read
    /// to its end.
    pub fn close_if_unread<B>(&self, mut response: Response<B>) -> Response<B> {
        if let Some(ended) = &self.0
            && !ended.load(Ordering::Acquire)
        {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.ended.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
