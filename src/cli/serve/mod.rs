//! `urinorm serve`: one seen store shared by many crawler processes over
//! HTTP/1.1. The answers are the library's ([`urinorm::service::Service`]);
//! here is the HTTP shell: hyper on tokio, the bearer token, the limits
//! (body size, idle and slow clients, connections), the metrics, the log
//! (standard error), and a clean stop on SIGTERM or SIGINT.

use std::convert::Infallible;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
mod body;
mod gate;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    ALLOW, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE,
};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde_json::json;
use subtle::ConstantTimeEq;
use tokio::sync::Semaphore;
use urinorm::escape::escape_str;
use urinorm::pipeline::MAX_LINE_BYTES;
use urinorm::service::{
    Answer, Asking, Body, BodyError, BodyParts, CommitReport, Encoding, Event, FORGET_VERDICTS,
    Refused, Service, Settings, VERDICTS,
};
use urinorm::store::{Config, Stamp};
use urinorm::sys::os_error::Reason;

use body::{Reading, Spool, Streamed, Unread};
use gate::{Gate, Pass};

use crate::cli::args::{ColumnArgs, Feeds, RungArgs};
use crate::cli::engine::{SeenRequest, clock_at, parse_now, parse_size, report_store};
use crate::cli::{Error, Outcome, thread_count};

/// What `serve --help` and `urinorm man serve` end with: the protocol.
const SERVE_HELP: &str = "\
Endpoints (HTTP/1.1, kept alive; a body is URLs, one a line, plain or with
Content-Encoding gzip or zstd, read whole, then answered one line for each of
its lines, in order, as the answers are made):
  POST /v1/add        verdicts, admitting the new keys
  POST /v1/check      verdicts, admitting nothing
  POST /v1/forget     forgotten<TAB>key | absent<TAB>key | dup<TAB>key, ...:
                      the next add answers a forgotten key new
  POST /v1/expire?older-than=DURATION
                      removes the keys admitted longer ago, for good (JSON)
  POST /v1/compact    merges the store's runs into one (JSON)
  GET  /v1/stats      the store's and the service's figures (JSON)
  GET  /healthz       ok, or why not (needs no token)
  GET  /metrics       Prometheus text (no token with --metrics-public)

Verdicts:
  new<TAB>key         not held: admitted now (by /v1/add)
  expired<TAB>key     held, older than --seen-max-age: admitted again
  seen<TAB>key        held: committed, or admitted by any client since
  dup<TAB>key         a repeat, in the same body, of a key new or expired
                      there (a repeat of a held key is seen again)
  rejected<TAB>why    no URI a crawler fetches (not a URI reference, a
                      relative reference, mailto:, javascript:, ...)
  blank, filtered     an empty line; a line out of the scope filters

Status codes: 200 answered; 400 a malformed request or body; 401 no valid
token; 404 no such endpoint; 405 wrong method; 408 a body too slow; 413 a
body past --max-body; 415 another Content-Encoding; 500 the store could not
be read; 503 stopping, commits failing with no room left, the store found
damaged (until it is salvaged), or --max-inflight full (with Retry-After).

Signals: SIGTERM or SIGINT stops accepting, lets requests in flight finish
(10 s at most), commits, and exits; a second one exits at once. SIGKILL
loses at most --commit-every of admitted keys (answered new again), never
the store.

Exit codes: 0 a clean stop; 2 a usage error, a store that cannot be opened,
or a store found damaged while serving (what was admitted since is not
committed: salvage it, then serve again).";

#[derive(Args, Debug)]
#[command(after_long_help = SERVE_HELP)]
pub struct ServeArgs {
    #[command(flatten)]
    pub rung: RungArgs,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// The seen store to serve (made if missing), as `dedup --seen DIR`:
    /// the same files and keys. This process is its one writer.
    #[arg(long, value_name = "DIR")]
    pub seen: PathBuf,
    /// The address to listen on, IP:PORT (`localhost:PORT` is 127.0.0.1).
    /// An address other than loopback needs --token-file.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7878")]
    pub listen: String,
    /// Every request but /healthz must carry `Authorization: Bearer
    /// TOKEN`, TOKEN being this file's content (its final line break
    /// aside): at least 16 bytes, and best readable by its owner only.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Answer /metrics without the token (for a Prometheus that has none).
    #[arg(long)]
    pub metrics_public: bool,
    /// Read every block of the store this often, checking its checksums,
    /// at most --scrub-rate: damage is found before a request meets it
    /// (0 turns it off).
    #[arg(long, value_name = "DURATION", default_value = "1d", value_parser = urinorm::store::parse_duration)]
    pub scrub_every: Duration,
    /// The most a scrub reads a second.
    #[arg(long, value_name = "SIZE", default_value = "32M", value_parser = parse_size)]
    pub scrub_rate: u64,
    /// Commit the keys admitted at least this often (e.g. 1s, 250ms); a
    /// kill loses at most that much (those keys are answered new again).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = urinorm::store::parse_duration)]
    pub commit_every: Duration,
    /// A key admitted longer ago than this (e.g. 7d) counts as not held:
    /// it is answered `expired` and admitted again.
    #[arg(long, value_name = "DURATION", value_parser = urinorm::store::parse_duration)]
    pub seen_max_age: Option<Duration>,
    /// Take this time as now (RFC 3339, UTC) rather than the clock's, for
    /// what is admitted and for ages (tests and replays).
    #[arg(long, value_name = "TIME", value_parser = parse_now)]
    pub now: Option<Stamp>,
    /// Take a --now earlier than the store's last commit (a replay on
    /// purpose); without it, that is refused.
    #[arg(long, requires = "now")]
    pub replay: bool,
    /// When another process is writing the store, wait for it.
    #[arg(long)]
    pub seen_wait: bool,
    /// The largest request body taken; a larger one is answered 413.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    pub max_body: u64,
    /// A longer line is answered `rejected` (never truncated).
    #[arg(long, value_name = "N", default_value_t = MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
    /// The most memory the bodies being answered may hold together (each
    /// holds a few MiB at most, whatever its size, a small one less); a
    /// body past it is answered 503 with Retry-After.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
    pub max_inflight: u64,
    /// A connection that sends nothing (or too slowly) for this long is
    /// closed: idle between requests, in its headers, or in its body (408).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = urinorm::store::parse_duration)]
    pub idle_timeout: Duration,
    /// At most this many connections at once; more wait to be accepted.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_connections: usize,
    /// Threads answering requests (default: all cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,
    /// Say nothing but errors (not even where it listens).
    #[arg(short, long)]
    pub quiet: bool,
}

/// How long requests in flight at a stop may take to finish.
const DRAIN: Duration = Duration::from_secs(10);

/// How long a new connection may take to send its first request (or the
/// idle timeout, if shorter): a socket that sends nothing goes soon.
const FIRST_REQUEST: Duration = Duration::from_secs(5);

/// A body this small is answered on the connection's own thread: a hop to
/// the blocking pool costs more than the work.
const INLINE_BODY: usize = 4096;

/// The most a body being answered holds in memory: its decoded window,
/// the part being answered, its answer, and the answer waiting to be sent.
const BODY_BYTES: u64 = 4 * body::WINDOW as u64;

pub fn run(args: &ServeArgs) -> Result<Outcome, Error> {
    let addr = listen_address(&args.listen)?;
    let token = args.token_file.as_deref().map(read_token).transpose()?;
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(Error::Usage(format!(
            "serving on {addr}, beyond this machine, needs --token-file: every client would otherwise read and fill the store"
        )));
    }
    let threads = thread_count(args.threads)?;
    raise_open_files();
    let metrics = Arc::new(Metrics::new());
    let service = open_service(args, Arc::clone(&metrics))?;
    let listener = StdListener::bind(addr)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|source| Error::Usage(format!("cannot listen on {addr}: {}", Reason(&source))))?;
    let local = listener.local_addr().unwrap_or(addr);
    service.note_serving(&format!("http://{local}"))?;
    // SIGTERM and SIGINT end the serving, which drains and commits; a
    // second one exits at once.
    let deferred = urinorm::sys::cleanup::defer_interrupts();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .max_blocking_threads(threads.max(2) * 4)
        .enable_all()
        .build()
        .map_err(|source| {
            Error::Usage(format!(
                "cannot start the server's threads: {}",
                Reason(&source)
            ))
        })?;
    let server = Arc::new(Server {
        service,
        metrics,
        token,
        metrics_public: args.metrics_public,
        max_body: args.max_body,
        max_line_bytes: args.max_line_bytes,
        max_inflight: args.max_inflight,
        inflight: Arc::new(Semaphore::new(
            usize::try_from(args.max_inflight / 1024)
                .unwrap_or(usize::MAX)
                .min(Semaphore::MAX_PERMITS),
        )),
        idle: args.idle_timeout,
        work: Semaphore::new(threads),
    });
    if !args.quiet {
        let _ = writeln!(io::stderr(), "urinorm: listening on {local}");
    }
    runtime.block_on(accept_loop(
        Arc::clone(&server),
        listener,
        args.max_connections,
    ))?;
    // A body still being answered past the drain is refused, not admitted.
    let committed = server.service.close()?;
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(deferred);
    if !args.quiet {
        report_store(&args.seen, committed.keys, committed.runs, Some(committed));
    }
    Ok(Outcome::default())
}

/// The store opened as the options say (its lock taken, its configuration
/// checked), served, each commit told to `metrics`.
fn open_service(args: &ServeArgs, metrics: Arc<Metrics>) -> Result<Service, Error> {
    let lines = args.columns.mapper(&args.rung, Feeds::Frontier)?;
    let clock = clock_at(args.now);
    let request = SeenRequest {
        dir: &args.seen,
        config: Config::new(lines.key_settings()),
        readonly: false,
        wait: args.seen_wait,
        commit_every: args.commit_every,
        clock: args
            .seen_max_age
            .map_or(clock, |age| clock.with_max_age(age)),
        forget: false,
        refuse_clock_back: args.now.is_some() && !args.replay,
    };
    let store = request.open(args.quiet)?;
    let quiet = args.quiet;
    let observer = Box::new(move |event: &Event| match event {
        Event::Committed(report) => metrics.committed(report),
        Event::Damaged(why) => {
            metrics.damaged.set(1);
            // Said whatever --quiet says: it is an error.
            let _ = writeln!(
                io::stderr(),
                "urinorm: {}; writes are refused (503) and /healthz answers 503 until the store is salvaged",
                escape_str(why)
            );
        }
        Event::Scrubbed { bytes, took } => {
            metrics.scrubs.inc();
            if !quiet {
                let _ = writeln!(
                    io::stderr(),
                    "urinorm: scrubbed the store, {bytes} bytes in {:.1} s: every checksum matches",
                    took.as_secs_f64()
                );
            }
        }
    });
    let settings = Settings {
        commit_every: args.commit_every,
        max_line_bytes: args.max_line_bytes,
        scrub_every: (!args.scrub_every.is_zero()).then_some(args.scrub_every),
        scrub_bytes_per_second: args.scrub_rate,
        ..Settings::default()
    };
    Ok(Service::start_watched(
        store,
        lines,
        settings,
        Some(observer),
    )?)
}

/// Raises the limit of open files to the most it may be: each connection
/// is one, and a limit of 1,024 (a common default) would let idle sockets
/// keep new connections from being accepted at all.
fn raise_open_files() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` into the one it is given, which
    // outlives the call.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    if read == 0 && limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: setrlimit reads the `rlimit` it is given, which outlives
        // the call; a refusal leaves the limit as it was.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    }
}

/// `--listen`: IP:PORT, or localhost:PORT.
fn listen_address(text: &str) -> Result<SocketAddr, Error> {
    let loopback = text
        .strip_prefix("localhost:")
        .map(|port| format!("127.0.0.1:{port}"));
    loopback.as_deref().unwrap_or(text).parse().map_err(|_| {
        Error::Usage(format!(
            "--listen takes IP:PORT (such as 127.0.0.1:7878), not '{}'",
            escape_str(text)
        ))
    })
}

/// The token in `path`, less its final line break; never shown anywhere.
fn read_token(path: &std::path::Path) -> Result<Vec<u8>, Error> {
    let shown = escape_str(&path.display().to_string());
    let mut token = std::fs::read(path).map_err(|e| {
        Error::Usage(format!(
            "cannot read the token file '{shown}': {}",
            Reason(&e)
        ))
    })?;
    while token.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
        token.pop();
    }
    if token.is_empty() {
        return Err(Error::Usage(format!("the token file '{shown}' is empty")));
    }
    if token.len() < MIN_TOKEN_BYTES {
        return Err(Error::Usage(format!(
            "the token in '{shown}' is {} bytes long, too short to keep a guesser out: use at least {MIN_TOKEN_BYTES} random bytes (say, `head -c 24 /dev/urandom | base64 > FILE`)",
            token.len()
        )));
    }
    let mode =
        std::fs::metadata(path).map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()));
    if mode.is_ok_and(|mode| mode & 0o044 != 0) {
        let _ = writeln!(
            io::stderr(),
            "urinorm: warning: the token file '{shown}' can be read by other users of this machine (chmod 600 it)"
        );
    }
    Ok(token)
}

/// The shortest token taken.
const MIN_TOKEN_BYTES: usize = 16;

/// What every connection shares.
struct Server {
    service: Service,
    metrics: Arc<Metrics>,
    token: Option<Vec<u8>>,
    metrics_public: bool,
    max_body: u64,
    max_line_bytes: usize,
    max_inflight: u64,
    /// KiB of bodies being answered ([`BODY_BYTES`] a body at most).
    inflight: Arc<Semaphore>,
    idle: Duration,
    /// Bodies answered at once, off the connections' threads.
    work: Semaphore,
}

/// Accepts connections until an interrupt, then lets those in flight
/// finish (for at most [`DRAIN`]).
async fn accept_loop(
    server: Arc<Server>,
    listener: StdListener,
    max_connections: usize,
) -> Result<(), Error> {
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|source| Error::Usage(format!("cannot listen: {}", Reason(&source))))?;
    let mut http = hyper::server::conn::http1::Builder::new();
    // The header timer runs while a request's head is awaited: on a new
    // connection and between requests, so it bounds both a slow client's
    // headers and an idle kept-alive connection.
    http.timer(TokioTimer::new())
        .header_read_timeout(server.idle)
        .keep_alive(true)
        .max_buf_size(64 * 1024);
    let graceful = GracefulShutdown::new();
    let gate = Gate::new(max_connections, max_connections);
    let first_request = server.idle.min(FIRST_REQUEST);
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                // Out of file descriptors, say: try again shortly.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = tick.tick() => match urinorm::sys::cleanup::interrupted() {
                true => break,
                false => continue,
            },
        };
        // Without it, Nagle's algorithm and delayed acknowledgements hold a
        // small answer for tens of milliseconds.
        let _ = tcp.set_nodelay(true);
        let mut io = tokio_io_timeout::TimeoutStream::new(tcp);
        // A client that never reads its answer.
        io.set_write_timeout(Some(server.idle));
        let io = TokioIo::new(Box::pin(io));
        let pass = gate.admit();
        let service = {
            let (server, pass) = (Arc::clone(&server), Arc::clone(&pass));
            hyper::service::service_fn(move |request| {
                let (server, pass) = (Arc::clone(&server), Arc::clone(&pass));
                async move { Ok::<_, Infallible>(server.handle(request, &pass).await) }
            })
        };
        let connection = graceful.watch(http.serve_connection(io, service));
        tokio::spawn(async move {
            // Dropped unfinished, a connection is closed.
            tokio::pin!(connection);
            let first = tokio::select! {
                _ = &mut connection => return,
                () = tokio::time::sleep(first_request) => pass.has_requested(),
                () = pass.pushed_out() => return,
            };
            if first {
                tokio::select! {
                    _ = &mut connection => {}
                    () = pass.pushed_out() => {}
                }
            }
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
    Ok(())
}

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

type Answered = Response<BoxBody<Bytes, io::Error>>;

impl Server {
    async fn handle(self: Arc<Server>, request: Request<Incoming>, pass: &Pass) -> Answered {
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

    /// Whether the request carries the token (compared in constant time),
    /// or none is needed. The scheme's name is case-insensitive (RFC 9110
    /// §11.1).
    fn authorized(&self, request: &Request<Incoming>) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let Some(value) = request.headers().get(AUTHORIZATION) else {
            return false;
        };
        let value = value.as_bytes();
        let given = match value.split_at_checked(7) {
            Some((scheme, given)) if scheme.eq_ignore_ascii_case(b"bearer ") => given,
            _ => return false,
        };
        bool::from(given.ct_eq(token))
    }

    /// `/v1/add`, `/v1/check` and `/v1/forget`: a verdict for every line
    /// of the body, read whole into a spool (`body`), then answered a part
    /// at a time: a body of one part whole, a longer one as a chunked
    /// stream of its parts' answers.
    async fn lines(self: &Arc<Server>, request: Request<Incoming>, asking: Asking) -> Answered {
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
    async fn off_thread<T: Send + 'static>(
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

    /// `/v1/expire?older-than=DURATION` (with `expire`) and `/v1/compact`:
    /// done by the committer while lookups go on; the figures as JSON.
    async fn maintain(self: &Arc<Server>, query: Option<&str>, expire: bool) -> Answered {
        let older_than = match expire {
            true => match older_than(query) {
                Ok(age) => Some(age),
                Err(why) => return text(StatusCode::BAD_REQUEST, format!("{why}\n")),
            },
            false => None,
        };
        let server = Arc::clone(self);
        let done = self
            .off_thread(move || match older_than {
                Some(age) => server.service.expire(age),
                None => server.service.compact(),
            })
            .await;
        let committed = match done {
            Ok(Ok(committed)) => committed,
            Ok(Err(refused)) => return Failed::Refused(refused).response(),
            Err(response) => return response,
        };
        let mut body = json!({"keys": committed.keys, "runs": committed.runs});
        if expire {
            body["removed"] = json!(committed.forgotten);
        }
        json_answer(&body)
    }

    /// `/v1/stats`: the store's and the service's figures, as JSON.
    fn stats(&self) -> Answered {
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
    fn health(&self) -> Answered {
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
    fn metrics_text(&self) -> Answered {
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

/// Why a part of a body was not answered.
enum Failed {
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
    fn response(&self) -> Answered {
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

/// `/v1/expire`'s `older-than=DURATION` (as `seen expire --older-than`).
fn older_than(query: Option<&str>) -> Result<Duration, String> {
    let value = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("older-than="));
    let Some(value) = value else {
        return Err("/v1/expire needs ?older-than=DURATION (such as 30d)".into());
    };
    urinorm::store::parse_duration(value).map_err(|e| format!("older-than: {e}"))
}

/// A JSON answer.
fn json_answer(body: &serde_json::Value) -> Answered {
    let mut response = text(StatusCode::OK, format!("{body:#}\n"));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A plain-text answer.
fn text(status: StatusCode, body: impl Into<Bytes>) -> Answered {
    let body = Full::new(body.into()).map_err(|never: Infallible| match never {});
    let mut response = Response::new(body.boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    endpoint: &'static str,
    code: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerdictLabels {
    verdict: &'static str,
}

/// The service's metrics.
struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    /// All requests, for `/v1/stats` (not registered: the family has them).
    requests_total: Counter,
    lines: Family<VerdictLabels, Counter>,
    commit_seconds: Histogram,
    failed_commits: Counter,
    keys: Gauge,
    store_bytes: Gauge,
    pending_keys: Gauge,
    damaged: Gauge,
    scrubs: Counter,
}

impl Metrics {
    fn new() -> Metrics {
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

    fn answered(&self, answer: &Answer, words: &[&'static str]) {
        for (&verdict, &n) in words.iter().zip(&answer.counts) {
            if n > 0 {
                self.lines
                    .get_or_create(&VerdictLabels { verdict })
                    .inc_by(n);
            }
        }
    }

    fn committed(&self, report: &CommitReport) {
        match report.error {
            None => self.commit_seconds.observe(report.took.as_secs_f64()),
            Some(_) => {
                self.failed_commits.inc();
            }
        }
    }
}
