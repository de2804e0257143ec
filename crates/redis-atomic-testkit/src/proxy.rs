//! A fault-injecting TCP proxy between a client and a server.
//!
//! Why a proxy and not `tc netem`: netem is not available here, and the one fault that matters
//! most for correctness, *the request ran but its reply never came back*, needs the proxy to
//! forward one direction and not the other. Everything else (latency, blackhole, reset, refuse)
//! comes for free once bytes pass through our own code.
//!
//! The proxy runs on its own thread with its own tokio runtime, so faults keep working while a
//! test's runtime is blocked, and dropping the [`FaultProxy`] stops it and closes every
//! connection. Faults apply to traffic from the moment [`FaultProxy::set`] returns.
//!
//! [`Fault::RewriteReplies`] injects an exact bad reply into a real server's answer (a count
//! of 2^62, a wrong type), for decoders that must answer with a typed error, not abort.
//!
//! [`Fault::DropReplies`] is realistic about TCP: a byte stream cannot lose a reply and carry on,
//! so a connection that lost a reply is *poisoned*: nothing more reaches its client, and it is
//! reset when the fault ends (the client sees its connection die), never resumed with replies out
//! of step.
//!
//! [`Fault::CorruptReplies`] is a hostile server: a share of the replies to script calls is
//! replaced by random RESP (wrong types, nil, nesting, RESP3 types, error replies), by malformed
//! bytes (unknown types, negative or huge lengths, strings shorter than announced) or cut short,
//! the last two followed by the end of the connection. Seeded, bounded, counted
//! ([`ProxyStats::replies_corrupted`]); what it never sends, and why, is in [`wire`]'s doc. To
//! know which reply answers which request, the proxy frames both directions of a connection
//! ([`pump`]). [`ProxiedCluster`] puts a proxy in front of every node of a cluster.

mod cluster;
mod pump;
mod wire;

pub use cluster::ProxiedCluster;
use pump::{Direction, Pairing, Pump};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;

/// What the proxy does to traffic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// Forward everything.
    #[default]
    None,
    /// Delay every chunk, both directions, by this much (order kept).
    Latency(Duration),
    /// Accept connections and swallow everything, both directions: requests never arrive.
    Blackhole,
    /// Forward requests, swallow replies: requests run, their replies are lost. Connections that
    /// lost a reply get nothing more and are reset when the fault ends.
    DropReplies,
    /// Reset every open connection now, and every new one on arrival.
    Reset,
    /// Stop listening: new connections are refused by the kernel (open ones keep working).
    Refuse,
    /// Forward everything, but replace each occurrence of `find` in the reply bytes with
    /// `replace`. Matched within one read (a small reply arrives in one): count the rewrites in
    /// [`ProxyStats::replies_rewritten`] to know one happened.
    RewriteReplies {
        /// The bytes to find, e.g. `b":3\r\n"` (the integer 3).
        find: &'static [u8],
        /// What they become, e.g. `b":4611686018427387904\r\n"`.
        replace: &'static [u8],
    },
    /// Forward everything, but replace `percent` % of the replies to script calls (`EVAL`,
    /// `EVALSHA`, `FCALL` and their `_RO` forms, and the server module's `RATOMIC.<SCRIPT>`
    /// natives) with a random well-formed value no script sends,
    /// with malformed bytes, or with the reply cut short (those two end the connection). Each
    /// connection draws from a generator seeded with `seed` and the connection's number.
    CorruptReplies {
        /// Share of script-call replies corrupted (0..=100).
        percent: u8,
        /// Seed of the generator.
        seed: u64,
    },
}

/// Counters of what the proxy did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProxyStats {
    /// Connections accepted.
    pub accepted: u64,
    /// Connections reset by a fault.
    pub reset: u64,
    /// Chunks of reply bytes swallowed.
    pub replies_dropped: u64,
    /// Chunks of request bytes swallowed.
    pub requests_dropped: u64,
    /// Occurrences rewritten by [`Fault::RewriteReplies`].
    pub replies_rewritten: u64,
    /// Replies replaced by [`Fault::CorruptReplies`] (those that ended their connection too).
    pub replies_corrupted: u64,
}

impl std::ops::Add for ProxyStats {
    type Output = ProxyStats;

    /// The counts of two proxies together (the proxies of a cluster's nodes).
    fn add(self, o: ProxyStats) -> ProxyStats {
        ProxyStats {
            accepted: self.accepted + o.accepted,
            reset: self.reset + o.reset,
            replies_dropped: self.replies_dropped + o.replies_dropped,
            requests_dropped: self.requests_dropped + o.requests_dropped,
            replies_rewritten: self.replies_rewritten + o.replies_rewritten,
            replies_corrupted: self.replies_corrupted + o.replies_corrupted,
        }
    }
}

#[derive(Default)]
struct Counters {
    accepted: AtomicU64,
    reset: AtomicU64,
    replies_dropped: AtomicU64,
    requests_dropped: AtomicU64,
    replies_rewritten: AtomicU64,
    replies_corrupted: AtomicU64,
}

/// A running proxy; stops (closing every connection) on drop.
pub struct FaultProxy {
    addr: SocketAddr,
    fault: watch::Sender<Fault>,
    counters: Arc<Counters>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for FaultProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultProxy")
            .field("addr", &self.addr)
            .field("fault", &*self.fault.borrow())
            .finish()
    }
}

impl FaultProxy {
    /// Starts a proxy on a free 127.0.0.1 port forwarding to `upstream`.
    pub fn start(upstream: SocketAddr) -> std::io::Result<FaultProxy> {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let (fault, fault_rx) = watch::channel(Fault::None);
        let counters = Arc::new(Counters::default());
        let (shutdown, shutdown_rx) = tokio::sync::oneshot::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let c = counters.clone();
        let thread = std::thread::Builder::new()
            .name("redis-atomic-fault-proxy".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = TcpListener::from_std(std_listener) else {
                        return;
                    };
                    let accept = accept_loop(listener, addr, upstream, fault_rx, c);
                    tokio::select! {
                        _ = accept => {}
                        _ = shutdown_rx => {}
                    }
                });
            })?;
        Ok(FaultProxy {
            addr,
            fault,
            counters,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `redis://127.0.0.1:PORT` of the proxy.
    pub fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// Applies `fault` from now on.
    pub fn set(&self, fault: Fault) {
        self.fault.send_replace(fault);
    }

    /// The fault in force.
    pub fn fault(&self) -> Fault {
        *self.fault.borrow()
    }

    /// What the proxy did so far.
    pub fn stats(&self) -> ProxyStats {
        let c = &self.counters;
        ProxyStats {
            accepted: c.accepted.load(Ordering::Relaxed),
            reset: c.reset.load(Ordering::Relaxed),
            replies_dropped: c.replies_dropped.load(Ordering::Relaxed),
            requests_dropped: c.requests_dropped.load(Ordering::Relaxed),
            replies_rewritten: c.replies_rewritten.load(Ordering::Relaxed),
            replies_corrupted: c.replies_corrupted.load(Ordering::Relaxed),
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept_loop(
    mut listener: TcpListener,
    addr: SocketAddr,
    upstream: SocketAddr,
    mut fault: watch::Receiver<Fault>,
    counters: Arc<Counters>,
) {
    loop {
        if *fault.borrow_and_update() == Fault::Refuse {
            drop(listener);
            while *fault.borrow_and_update() == Fault::Refuse {
                if fault.changed().await.is_err() {
                    return;
                }
            }
            listener = match rebind(addr) {
                Ok(l) => l,
                Err(e) => {
                    tracing::error!(%addr, error = %e, "fault proxy could not listen again");
                    return;
                }
            };
        }
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((client, _)) = accepted else { continue };
                let serial = counters.accepted.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(serve(client, upstream, serial, fault.clone(), counters.clone()));
            }
            changed = fault.changed() => if changed.is_err() { return },
        }
    }
}

fn rebind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(128)
}

/// One client connection: two pumps until either side closes or a fault ends it. The client
/// socket has SO_LINGER 0, so however the connection ends the client sees a reset, as it would
/// when a network path or a server dies, never a tidy FIN that looks like a server's `QUIT`.
async fn serve(
    client: TcpStream,
    upstream: SocketAddr,
    serial: u64,
    mut fault: watch::Receiver<Fault>,
    counters: Arc<Counters>,
) {
    let _ = client.set_zero_linger();
    if *fault.borrow_and_update() == Fault::Reset {
        counters.reset.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let Ok(server) = TcpStream::connect(upstream).await else {
        counters.reset.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let poisoned = Arc::new(AtomicBool::new(false));
    let pairing = Arc::new(Pairing::new());
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let pump_with = |dir| Pump {
        dir,
        serial,
        fault: fault.clone(),
        counters: counters.clone(),
        poisoned: poisoned.clone(),
        pairing: pairing.clone(),
    };
    let up = pump_with(Direction::Request).run(client_read, server_write);
    let down = pump_with(Direction::Reply).run(server_read, client_write);
    let ended_by_fault = async {
        loop {
            if fault.changed().await.is_err() {
                return;
            }
            let now = *fault.borrow_and_update();
            if now == Fault::Reset || (poisoned.load(Ordering::SeqCst) && now != Fault::DropReplies)
            {
                return;
            }
        }
    };
    tokio::select! {
        _ = up => {}
        _ = down => {}
        _ = ended_by_fault => { counters.reset.fetch_add(1, Ordering::Relaxed); }
    }
    // Dropping the pumps drops both halves of both sockets: the client gets a reset.
}
