//! A request sent to its answer: the endpoints, their methods, which
//! need the token, and the counting of every answer. It knows paths and
//! methods; how each endpoint answers is the other modules'.

use std::convert::Infallible;
use std::io;
use std::sync::Arc;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use urinorm::service::Asking;

use super::Server;
use super::gate::Pass;
use super::metrics::RequestLabels;

/// The endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    Add,
    Check,
    Forget,
    Expire,
    Compact,
    Stats,
    Healthz,
    Metrics,
    Other,
}

impl Endpoint {
    fn of(path: &str) -> Endpoint {
        match path {
            "/v1/add" => Endpoint::Add,
            "/v1/check" => Endpoint::Check,
            "/v1/forget" => Endpoint::Forget,
            "/v1/expire" => Endpoint::Expire,
            "/v1/compact" => Endpoint::Compact,
            "/v1/stats" => Endpoint::Stats,
            "/healthz" => Endpoint::Healthz,
            "/metrics" => Endpoint::Metrics,
            _ => Endpoint::Other,
        }
    }

    /// Its name in the metrics.
    fn name(self) -> &'static str {
        match self {
            Endpoint::Add => "add",
            Endpoint::Check => "check",
            Endpoint::Forget => "forget",
            Endpoint::Expire => "expire",
            Endpoint::Compact => "compact",
            Endpoint::Stats => "stats",
            Endpoint::Healthz => "healthz",
            Endpoint::Metrics => "metrics",
            Endpoint::Other => "other",
        }
    }

    fn method(self) -> Method {
        match self {
            Endpoint::Add
            | Endpoint::Check
            | Endpoint::Forget
            | Endpoint::Expire
            | Endpoint::Compact => Method::POST,
            _ => Method::GET,
        }
    }

    /// Whether it needs the token: all but the health check, which tells
    /// only ok or failing (a load balancer has no token), and the metrics
    /// with --metrics-public.
    fn needs_token(self, metrics_public: bool) -> bool {
        match self {
            Endpoint::Healthz => false,
            Endpoint::Metrics => !metrics_public,
            _ => true,
        }
    }
}

pub(super) type Answered = Response<BoxBody<Bytes, io::Error>>;

impl Server {
    pub(super) async fn handle(
        self: Arc<Server>,
        request: Request<Incoming>,
        pass: &Pass,
    ) -> Answered {
        pass.requested();
        let endpoint = Endpoint::of(request.uri().path());
        let response = self.answer(endpoint, request, pass).await;
        let labels = RequestLabels {
            endpoint: endpoint.name(),
            code: response.status().as_u16(),
        };
        self.metrics.requests.get_or_create(&labels).inc();
        self.metrics.requests_total.inc();
        response
    }

    async fn answer(
        self: &Arc<Server>,
        endpoint: Endpoint,
        request: Request<Incoming>,
        pass: &Pass,
    ) -> Answered {
        // Every request, before a byte of its body is read.
        let authorized = self.authorized(&request);
        if authorized {
            pass.prove().await;
        }
        if endpoint.needs_token(self.metrics_public) && !authorized {
            let mut response = text(StatusCode::UNAUTHORIZED, "a valid bearer token is needed\n");
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return response;
        }
        if endpoint == Endpoint::Other {
            return text(
                StatusCode::NOT_FOUND,
                "no such endpoint: see /v1/add, /v1/check, /v1/forget, /v1/expire, /v1/compact, /v1/stats, /healthz, /metrics\n",
            );
        }
        if request.method() != endpoint.method() {
            let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
            let allow = HeaderValue::from_static(match endpoint.method() {
                Method::POST => "POST",
                _ => "GET",
            });
            response.headers_mut().insert(ALLOW, allow);
            return response;
        }
        match endpoint {
            Endpoint::Add => self.lines(request, Asking::Add).await,
            Endpoint::Check => self.lines(request, Asking::Check).await,
            Endpoint::Forget => self.lines(request, Asking::Forget).await,
            Endpoint::Expire => self.maintain(request.uri().query(), true).await,
            Endpoint::Compact => self.maintain(None, false).await,
            Endpoint::Stats => self.stats(),
            Endpoint::Healthz => self.health(),
            Endpoint::Metrics => self.metrics_text(),
            Endpoint::Other => unreachable!("answered above"),
        }
    }
}

/// A JSON answer.
pub(super) fn json_answer(body: &serde_json::Value) -> Answered {
    let mut response = text(StatusCode::OK, format!("{body:#}\n"));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A plain-text answer.
pub(super) fn text(status: StatusCode, body: impl Into<Bytes>) -> Answered {
    let body = Full::new(body.into()).map_err(|never: Infallible| match never {});
    let mut response = Response::new(body.boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
