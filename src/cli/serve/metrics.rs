//! What the service tells of itself: `/v1/stats` (JSON), `/healthz` and
//! `/metrics` (Prometheus's text), and the counters behind them. It knows
//! the figures; not how a request is answered.

use hyper::StatusCode;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde_json::json;
use urinorm::service::{Answer, CommitReport, VERDICTS};

use super::Server;
use super::routes::{Answered, json_answer, text};

impl Server {
    /// `/v1/stats`: the store's and the service's figures, as JSON.
    pub(super) fn stats(&self) -> Answered {
        let status = self.service.status();
        let lines: serde_json::Map<String, serde_json::Value> = VERDICTS
            .iter()
            .map(|&verdict| {
                let n = self
                    .metrics
                    .lines
                    .get_or_create(&VerdictLabels { verdict })
                    .get();
                (verdict.to_string(), json!(n))
            })
            .collect();
        let requests = self.metrics.requests_total.get();
        let at = status
            .committed_at
            .map(|t| humantime::format_rfc3339_seconds(t).to_string());
        let body = json!({
            "store": {
                "keys": status.keys,
                "runs": status.runs,
                "bytes": status.store_bytes,
                "config": status.config.to_json(),
                "commits": status.commit,
                "last_commit": at,
            },
            "service": {
                "requests": requests,
                "lines": lines,
                "pending_keys": status.pending_keys,
                "commits": status.commits,
                "failed_commits": status.failed_commits,
                "failing": status.failing,
                "damaged": status.damaged,
                "scrubs": status.scrubs,
                "last_scrub": status.last_scrub.map(|t| humantime::format_rfc3339_seconds(t).to_string()),
            },
        });
        json_answer(&body)
    }

    /// `/healthz`: 200 while the store is sound and commits succeed, 503
    /// with the reason else.
    pub(super) fn health(&self) -> Answered {
        let status = self.service.status();
        match (status.damaged, status.failing) {
            (None, None) => text(StatusCode::OK, "ok\n"),
            (Some(why), _) => text(StatusCode::SERVICE_UNAVAILABLE, format!("damaged: {why}\n")),
            (None, Some(why)) => text(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("commits are failing: {why}\n"),
            ),
        }
    }

    /// `/metrics`: Prometheus's (OpenMetrics) text format.
    pub(super) fn metrics_text(&self) -> Answered {
        let status = self.service.status();
        self.metrics.keys.set(gauge(status.keys));
        self.metrics.store_bytes.set(gauge(status.store_bytes));
        self.metrics
            .pending_keys
            .set(gauge(status.pending_keys as u64));
        let mut body = String::new();
        if prometheus_client::encoding::text::encode(&mut body, &self.metrics.registry).is_err() {
            return text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the metrics could not be written\n",
            );
        }
        let mut response = text(StatusCode::OK, body);
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        );
        response
    }
}

fn gauge(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct RequestLabels {
    pub(super) endpoint: &'static str,
    pub(super) code: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerdictLabels {
    verdict: &'static str,
}

/// The service's metrics.
pub(super) struct Metrics {
    registry: Registry,
    pub(super) requests: Family<RequestLabels, Counter>,
    /// All requests, for `/v1/stats` (not registered: the family has them).
    pub(super) requests_total: Counter,
    lines: Family<VerdictLabels, Counter>,
    commit_seconds: Histogram,
    failed_commits: Counter,
    keys: Gauge,
    store_bytes: Gauge,
    pending_keys: Gauge,
    pub(super) damaged: Gauge,
    pub(super) scrubs: Counter,
}

impl Metrics {
    pub(super) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("urinorm_serve");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "requests",
            "HTTP requests answered, by endpoint and status",
            requests.clone(),
        );
        let lines = Family::<VerdictLabels, Counter>::default();
        registry.register("lines", "Lines answered, by verdict", lines.clone());
        // 1 ms to 16 s.
        let commit_seconds = Histogram::new(exponential_buckets(0.001, 2.0, 15));
        registry.register(
            "commit_seconds",
            "Time each commit took (its count is the commits made)",
            commit_seconds.clone(),
        );
        let failed_commits = Counter::default();
        registry.register(
            "failed_commits",
            "Commits that failed (their keys wait for the next)",
            failed_commits.clone(),
        );
        let keys = Gauge::default();
        registry.register("keys", "Keys the store holds", keys.clone());
        let store_bytes = Gauge::default();
        registry.register(
            "store_bytes",
            "Bytes the store's files take",
            store_bytes.clone(),
        );
        let pending_keys = Gauge::default();
        registry.register(
            "pending_keys",
            "Keys admitted, not yet committed",
            pending_keys.clone(),
        );
        let damaged = Gauge::default();
        registry.register(
            "damaged",
            "1 once the store was found damaged: writes are refused until it is salvaged",
            damaged.clone(),
        );
        let scrubs = Counter::default();
        registry.register(
            "scrubs",
            "Scrubs that read the whole store and found every checksum right",
            scrubs.clone(),
        );
        Metrics {
            registry,
            requests,
            requests_total: Counter::default(),
            lines,
            commit_seconds,
            failed_commits,
            keys,
            store_bytes,
            pending_keys,
            damaged,
            scrubs,
        }
    }

    pub(super) fn answered(&self, answer: &Answer, words: &[&'static str]) {
        for (&verdict, &n) in words.iter().zip(&answer.counts) {
            if n > 0 {
                self.lines
                    .get_or_create(&VerdictLabels { verdict })
                    .inc_by(n);
            }
        }
    }

    pub(super) fn committed(&self, report: &CommitReport) {
        match report.error {
            None => self.commit_seconds.observe(report.took.as_secs_f64()),
            Some(_) => {
                self.failed_commits.inc();
            }
        }
    }
}
