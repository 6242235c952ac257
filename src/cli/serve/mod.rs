//! `urinorm serve`: one seen store shared by many crawler processes over
//! HTTP/1.1. The answers are the library's ([`urinorm::service::Service`]);
//! here is the HTTP shell: hyper on tokio, the bearer token, the limits
//! (body size, idle and slow clients, connections), the metrics, the log
//! (standard error), and a clean stop on SIGTERM or SIGINT.
//!
//! `accept` takes the connections and drains them at a stop, `routes`
//! sends each request to its answer, `lines` answers bodies of lines,
//! `maintain` expires and compacts, `metrics` tells the figures, `token`
//! checks the bearer token; here are the options and the start.

mod accept;
mod body;
mod gate;
mod lines;
mod maintain;
mod metrics;
mod routes;
mod token;

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tokio::sync::Semaphore;
use urinorm::escape::escape_str;
use urinorm::pipeline::MAX_LINE_BYTES;
use urinorm::service::{Event, Service, Settings};
use urinorm::store::{Config, Stamp};
use urinorm::sys::os_error::Reason;

use accept::accept_loop;
use metrics::Metrics;
use token::read_token;

use crate::cli::args::{BudgetArgs, ColumnArgs, Feeds, RungArgs};
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
    #[command(flatten)]
    pub budget: BudgetArgs,
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
        budget: args.budget.budget(),
        fixed_time: args.now.is_some(),
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

/// What every connection shares.
struct Server {
    service: Service,
    metrics: Arc<Metrics>,
    token: Option<Vec<u8>>,
    metrics_public: bool,
    max_body: u64,
    max_line_bytes: usize,
    max_inflight: u64,
    /// KiB of bodies being answered ([`BODY_BYTES`](lines::BODY_BYTES) a body
    /// at most).
    inflight: Arc<Semaphore>,
    idle: Duration,
    /// Bodies answered at once, off the connections' threads.
    work: Semaphore,
}
