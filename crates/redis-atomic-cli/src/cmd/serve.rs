//! `redis-atomic serve`: every primitive over HTTP/JSON — the `redis-atomic-server` crate's
//! `serve` face ([`ServeFace`]) started from flags through its one start-up sequence
//! ([`redis_atomic_server::start`]), which `proxy` shares.

use super::proxy::{self as face, FaceArgs};
use redis_atomic_server::faces::ServeFace;
use std::io::Write;

/// Arguments of `serve`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Prints the bound address (http://HOST:PORT) on one stdout line once \
    ready; logs go to stderr (RUST_LOG=info for one line per event). Stops on SIGTERM or Ctrl-C \
    after in-flight requests finish.\n\nExit codes: 0 stopped by a signal; 1 the server failed \
    while running; 2 usage, unreadable or invalid --config, a non-loopback --listen without \
    [auth] tokens, an address that cannot be bound, or Redis unreachable."
)]
pub struct ServeArgs {
    /// Address to listen on, IP:PORT (port 0: any free port, printed at start). Off loopback
    /// it needs [auth] tokens.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7379")]
    pub listen: String,
    /// Which Redis, which config ([auth] tokens, [limits.NAME] policies, [serve] settings).
    #[command(flatten)]
    pub face: FaceArgs,
}

/// Runs `serve` on a fresh runtime until a signal; returns the exit code.
pub fn run(args: ServeArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    face::start(&ServeFace, &args.face, &args.listen, out, err)
}
