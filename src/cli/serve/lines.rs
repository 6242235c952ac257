//! `/v1/add`, `/v1/check` and `/v1/forget`: a body of lines read whole
//! into a spool, within its share of `--max-inflight`, then answered a
//! part at a time, small parts on the connection's thread, larger ones on
//! the blocking pool. It knows bodies and their answers; not the routes.

use std::io;
use std::sync::Arc;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::{Request, Response, StatusCode};
use urinorm::service::{
    Answer, Asking, Body, BodyError, BodyParts, Encoding, FORGET_VERDICTS, Refused, VERDICTS,
};
use urinorm::sys::os_error::Reason;

use super::Server;
use super::body::{self, Reading, Spool, Streamed, Unread};
use super::routes::{Answered, text};

/// A body this small is answered on the connection's own thread: a hop to
/// the blocking pool costs more than the work.
const INLINE_BODY: usize = 4096;

/// The most a body being answered holds in memory: its decoded window,
/// the part being answered, its answer, and the answer waiting to be sent.
const BODY_BYTES: u64 = 4 * body::WINDOW as u64;

impl Server {
    /// `/v1/add`, `/v1/check` and `/v1/forget`: a verdict for every line
    /// of the body, read whole into a spool (`body`), then answered a part
    /// at a time: a body of one part whole, a longer one as a chunked
    /// stream of its parts' answers.
    pub(super) async fn lines(
        self: &Arc<Server>,
        request: Request<Incoming>,
        asking: Asking,
    ) -> Answered {
        // Refused before the body is read: a client that asked to continue
        // uploads nothing.
        let declared = request
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_body) {
            return unread(&Unread::Body(BodyError::TooLarge { max: self.max_body }));
        }
        let encoding = match body::encoding(request.headers()) {
            Ok(encoding) => encoding,
            Err(why) => return text(StatusCode::UNSUPPORTED_MEDIA_TYPE, format!("{why}\n")),
        };
        // What the body may hold in memory at once, in KiB: a few windows,
        // or less for a plain body declared smaller.
        let bytes = match (encoding, declared) {
            (Encoding::Identity, Some(n)) => {
                n.saturating_mul(3).saturating_add(4096).min(BODY_BYTES)
            }
            _ => BODY_BYTES,
        };
        let kib = u32::try_from(bytes.div_ceil(1024)).unwrap_or(u32::MAX);
        let Ok(permit) = Arc::clone(&self.inflight).try_acquire_many_owned(kib) else {
            let mut response = text(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the bodies being answered fill --max-inflight ({} bytes): try again shortly\n",
                    self.max_inflight
                ),
            );
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
        };
        let parts = BodyParts::new(encoding, body::WINDOW, self.max_line_bytes, self.max_body);
        let mut reading = Reading::new(request.into_body(), parts, self.idle);
        let mut spool = Spool::default();
        loop {
            let part = match reading.next().await {
                Ok(Some(part)) => part,
                Ok(None) => break,
                Err(why) => return unread(&why),
            };
            if let Err(e) = spool.keep(part).await {
                return kept_badly(&e);
            }
        }
        let first = match spool.next().await {
            Ok(first) => first.unwrap_or_default(),
            Err(e) => return kept_badly(&e),
        };
        let (mut state, first) = self.answer_part(first, asking, Body::default()).await;
        let first = match first {
            Ok(answer) => answer,
            Err(failed) => return failed.response(),
        };
        if spool.is_empty() {
            return text(StatusCode::OK, first.body);
        }
        let (sender, receiver) = tokio::sync::mpsc::channel(1);
        let server = Arc::clone(self);
        tokio::spawn(async move {
            let _permit = permit;
            let mut answer = Ok(first.body.into());
            loop {
                if sender.send(answer).await.is_err() {
                    return;
                }
                let part = match spool.next().await {
                    Ok(Some(part)) => part,
                    Ok(None) => return,
                    Err(e) => {
                        let _ = sender.send(Err(e)).await;
                        return;
                    }
                };
                let answered;
                (state, answered) = server.answer_part(part, asking, state).await;
                answer = answered
                    .map(|a| a.body.into())
                    .map_err(|failed| io::Error::other(failed.sentence()));
                if answer.is_err() {
                    let _ = sender.send(answer).await;
                    return;
                }
            }
        });
        let mut response = Response::new(Streamed(receiver).boxed());
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        response
    }

    /// Answers one part of a body, carrying `state` from the parts before
    /// to the next; a small part on the connection's own thread, a larger
    /// one (and every forget, which waits for the committer) on the
    /// blocking pool.
    async fn answer_part(
        self: &Arc<Server>,
        part: Vec<u8>,
        asking: Asking,
        mut state: Body,
    ) -> (Body, Result<Answer, Failed>) {
        let answered = match part.len() <= INLINE_BODY && asking != Asking::Forget {
            true => {
                let answered = self.service.answer_part(&part, asking, &mut state);
                (state, answered)
            }
            false => {
                let server = Arc::clone(self);
                let work = move || {
                    let answered = server.service.answer_part(&part, asking, &mut state);
                    (state, answered)
                };
                match self.off_thread(work).await {
                    Ok(answered) => answered,
                    Err(_) => return (Body::default(), Err(Failed::Bug)),
                }
            }
        };
        let (state, answered) = answered;
        if let Ok(answer) = &answered {
            let words = match asking {
                Asking::Forget => &FORGET_VERDICTS[..],
                _ => &VERDICTS[..],
            };
            self.metrics.answered(answer, words);
        }
        (state, answered.map_err(Failed::Refused))
    }

    /// Runs `work` on the blocking pool, as many at once as there are
    /// threads; a panic is answered 500.
    pub(super) async fn off_thread<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Answered> {
        let _permit = self.work.acquire().await.expect("never closed");
        tokio::task::spawn_blocking(work).await.map_err(|_| {
            text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal error (a bug: please report it)\n",
            )
        })
    }
}

/// Why a part of a body was not answered.
pub(super) enum Failed {
    Refused(Refused),
    /// Its answering panicked.
    Bug,
}

impl Failed {
    fn sentence(&self) -> String {
        match self {
            Failed::Refused(refused) => refused.to_string(),
            Failed::Bug => "internal error (a bug: please report it)".into(),
        }
    }

    /// 503 while the service cannot write (it is stopping, full, or the
    /// store is damaged), 500 when the store could not be read (or a bug).
    pub(super) fn response(&self) -> Answered {
        let status = match self {
            Failed::Refused(Refused::Store(_)) | Failed::Bug => StatusCode::INTERNAL_SERVER_ERROR,
            Failed::Refused(_) => StatusCode::SERVICE_UNAVAILABLE,
        };
        text(status, format!("{}\n", self.sentence()))
    }
}

/// The answer to a body that could not be kept while it was read.
fn kept_badly(e: &io::Error) -> Answered {
    text(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!(
            "the body could not be kept in a temporary file while it was read: {}\n",
            Reason(e)
        ),
    )
}

/// The answer to a body that could not be read before any of it was
/// answered.
fn unread(why: &Unread) -> Answered {
    let status = match why {
        Unread::Slow => StatusCode::REQUEST_TIMEOUT,
        Unread::Broken | Unread::Body(BodyError::Undecodable { .. }) => StatusCode::BAD_REQUEST,
        Unread::Body(BodyError::TooLarge { .. }) => StatusCode::PAYLOAD_TOO_LARGE,
    };
    text(status, format!("{}\n", why.sentence()))
}
