//! Connections: accepted until an interrupt, each bounded (its first
//! request, its idle time, its writes, the connections' gate), then those
//! in flight drained at a stop. It knows sockets and hyper's connections;
//! what a request is answered is `routes`'.

use std::convert::Infallible;
use std::net::TcpListener as StdListener;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use urinorm::sys::os_error::Reason;

use super::Server;
use super::gate::Gate;
use crate::cli::Error;

/// How long requests in flight at a stop may take to finish.
const DRAIN: Duration = Duration::from_secs(10);

/// How long a new connection may take to send its first request (or the
/// idle timeout, if shorter): a socket that sends nothing goes soon.
const FIRST_REQUEST: Duration = Duration::from_secs(5);

/// Accepts connections until an interrupt, then lets those in flight
/// finish (for at most [`DRAIN`]).
pub(super) async fn accept_loop(
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
