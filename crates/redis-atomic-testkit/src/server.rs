//! One `redis-server` process as an RAII guard.
//!
//! Readiness is decided by `PING` with a deadline, never by scraping the log (log lines change
//! between versions and between Redis and Valkey). The process runs from a fresh temp dir with a
//! config file written there, so `restart()` brings it back on the same port with the same data.
// Unsafe is needed for two libc calls: prctl(PR_SET_PDEATHSIG) in the child before exec, and
// kill(2) to send SIGSTOP/SIGCONT/SIGTERM/SIGKILL to our own child.
#![allow(unsafe_code)]

use crate::error::{io, TestkitError};
use crate::tls::ServerTls;
use std::collections::HashSet;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How to start a server.
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// Listen on a unix socket in the temp dir instead of TCP.
    pub unix_socket: bool,
    /// `appendonly yes` (default no; `save ""` always).
    pub appendonly: bool,
    /// `maxmemory` in bytes, with `maxmemory-policy noeviction` unless
    /// [`ServerOptions::maxmemory_policy`] says otherwise.
    pub maxmemory: Option<u64>,
    /// Extra `directive value` config lines.
    pub extra_config: Vec<String>,
    /// The server binary (default: [`server_binary`]).
    pub binary: Option<PathBuf>,
    /// `cluster-enabled yes` (used by [`crate::RedisCluster`]).
    pub cluster: bool,
    /// `appendfsync` (the server's default, `everysec`, when None); takes effect with
    /// [`ServerOptions::appendonly`].
    pub appendfsync: Option<Fsync>,
    /// `maxmemory-policy` (e.g. `allkeys-lru`) instead of `noeviction`.
    pub maxmemory_policy: Option<String>,
    /// Run under the clock shim, so [`RedisServer::set_clock_offset`] can move the server's wall
    /// clock while it runs (see [`crate::clock`]).
    pub clock: bool,
    /// Serve TLS only (`port 0`, `tls-port`): [`RedisServer::url`] is then `rediss://` and
    /// [`RedisServer::client`] trusts the CA and presents the client certificate.
    pub tls: Option<ServerTls>,
    /// Run as a Sentinel (`--sentinel`; used by [`crate::SentinelGroup`]).
    pub sentinel: bool,
    /// `requirepass` (and, on a data node, `masterauth` with the same password, so replicas of
    /// a node configured alike can sync): [`RedisServer::url`] and [`RedisServer::client`]
    /// then carry it. Use URL-safe characters.
    pub password: Option<String>,
}

/// When the AOF is fsynced (`appendfsync`), which bounds what a crash loses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fsync {
    /// Before every reply: a crash loses nothing acknowledged.
    Always,
    /// Once a second, in the background (Redis's default).
    Everysec,
    /// Left to the kernel.
    No,
}

impl Fsync {
    /// The config value.
    pub fn as_str(self) -> &'static str {
        match self {
            Fsync::Always => "always",
            Fsync::Everysec => "everysec",
            Fsync::No => "no",
        }
    }
}

/// A running `redis-server`, killed and reaped on drop.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: Option<u16>,
    socket: Option<PathBuf>,
    dir: tempfile::TempDir,
    config: PathBuf,
    binary: PathBuf,
    tls: Option<ServerTls>,
    sentinel: bool,
    password: Option<String>,
    /// Set by [`RedisServer::crash`]; cleared when the process is spawned again.
    crashed: std::sync::atomic::AtomicBool,
    /// With [`ServerOptions::clock`]: the shim and the server's offset file.
    pub(crate) clock: Option<(PathBuf, PathBuf)>,
}

/// `REDIS_ATOMIC_SERVER_BIN`, else `redis-server` on `PATH`.
pub fn server_binary() -> Result<PathBuf, TestkitError> {
    if let Some(path) = std::env::var_os("REDIS_ATOMIC_SERVER_BIN") {
        let path = PathBuf::from(path);
        return if path.exists() {
            Ok(path)
        } else {
            Err(TestkitError::BinaryNotFound(path))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("redis-server"))
        .find(|p| p.is_file())
        .ok_or(TestkitError::BinaryMissing)
}

/// A free TCP port on 127.0.0.1 below 55535 whose cluster bus port (+10000) is free too, not
/// handed out before by this process.
pub fn free_port() -> u16 {
    static USED: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
    loop {
        let port = rand::random_range(20_000..45_000u16);
        let mut used = USED.lock().unwrap_or_else(|p| p.into_inner());
        let used = used.get_or_insert_with(HashSet::new);
        if used.contains(&port) {
            continue;
        }
        let free = |p: u16| TcpListener::bind(("127.0.0.1", p)).is_ok();
        if free(port) && free(port + 10_000) {
            used.insert(port);
            return port;
        }
    }
}

/// Runs `start` on a thread that lives as long as the process and returns its result (panicking
/// with the reason on failure): processes spawned there get `PR_SET_PDEATHSIG` from a thread
/// that never ends, so a per-binary shared fixture lives until the test binary exits, whichever
/// test thread first asked for it.
pub(crate) fn on_lasting_thread<T: Send + 'static>(
    name: &str,
    start: impl FnOnce() -> Result<T, TestkitError> + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(start());
            loop {
                std::thread::park();
            }
        })
        .unwrap_or_else(|e| panic!("spawn {name} thread: {e}"));
    match rx.recv() {
        Ok(Ok(value)) => value,
        Ok(Err(e)) => panic!("{name}: {e}"),
        Err(e) => panic!("{name} thread died: {e}"),
    }
}

impl RedisServer {
    /// One default server per test binary, for tests that each use their own keys or names.
    /// Panics with the reason when it cannot start.
    pub fn shared() -> &'static RedisServer {
        static SHARED: std::sync::OnceLock<RedisServer> = std::sync::OnceLock::new();
        SHARED.get_or_init(|| {
            on_lasting_thread("redis-atomic-testkit-server", || {
                RedisServer::start(ServerOptions::default())
            })
        })
    }

    /// Starts a server and waits until it answers `PING` (10 s deadline). Retries on another
    /// port when the chosen one was taken meanwhile.
    pub fn start(opts: ServerOptions) -> Result<RedisServer, TestkitError> {
        let binary = match &opts.binary {
            Some(b) => b.clone(),
            None => server_binary()?,
        };
        let mut last = None;
        for _ in 0..5 {
            let dir = tempfile::Builder::new()
                .prefix("redis-atomic-")
                .tempdir()
                .map_err(io("create temp dir"))?;
            let port = (!opts.unix_socket).then(free_port);
            let socket = opts.unix_socket.then(|| dir.path().join("redis.sock"));
            let config = dir.path().join("redis.conf");
            std::fs::write(
                &config,
                config_text(&opts, dir.path(), port, socket.as_deref()),
            )
            .map_err(io("write redis.conf"))?;
            let clock = match opts.clock {
                true => Some((
                    crate::clock::shim()?,
                    crate::clock::create_offset_file(dir.path())?,
                )),
                false => None,
            };
            let mut server = RedisServer {
                child: None,
                port,
                socket,
                dir,
                config,
                binary: binary.clone(),
                tls: opts.tls.clone(),
                sentinel: opts.sentinel,
                password: opts.password.clone(),
                crashed: Default::default(),
                clock,
            };
            match server.spawn_and_wait() {
                Ok(()) => return Ok(server),
                Err(TestkitError::NotReady { log, reason })
                    if log.contains("Address already in use") =>
                {
                    last = Some(TestkitError::NotReady { log, reason });
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(TestkitError::NotReady {
            reason: "no free port".into(),
            log: String::new(),
        }))
    }

    fn spawn_and_wait(&mut self) -> Result<(), TestkitError> {
        let mut cmd = Command::new(&self.binary);
        cmd.arg(&self.config);
        if self.sentinel {
            cmd.arg("--sentinel");
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some((shim, offset)) = &self.clock {
            cmd.env("LD_PRELOAD", shim)
                .env(crate::clock::CLOCK_FILE_ENV, offset);
        }
        // SAFETY: prctl is async-signal-safe and touches no memory of the parent; it makes the
        // kernel SIGKILL the server when the thread that spawned it exits, so no server outlives
        // its test binary even if a guard is never dropped (statics).
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        self.child = Some(
            cmd.spawn()
                .map_err(io(format!("spawn {}", self.binary.display())))?,
        );
        self.crashed
            .store(false, std::sync::atomic::Ordering::SeqCst);
        self.wait_ready(Duration::from_secs(10))
    }

    fn wait_ready(&mut self, limit: Duration) -> Result<(), TestkitError> {
        let deadline = Instant::now() + limit;
        let client = self.client();
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    self.child = None;
                    return Err(self.not_ready(format!("server exited with {status}")));
                }
            }
            if let Ok(mut conn) = client.get_connection_with_timeout(Duration::from_millis(200)) {
                if redis::cmd("PING").query::<String>(&mut conn).is_ok() {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(self.not_ready(format!("no PONG within {limit:?}")));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn not_ready(&self, reason: String) -> TestkitError {
        TestkitError::NotReady {
            reason,
            log: self.log_tail(40),
        }
    }

    /// `redis://127.0.0.1:PORT`, `rediss://127.0.0.1:PORT` (TLS) or
    /// `redis+unix:///path/redis.sock`; with [`ServerOptions::password`]
    /// `redis://:PASSWORD@127.0.0.1:PORT` (`?pass=PASSWORD` on a socket).
    pub fn url(&self) -> String {
        let auth = self
            .password
            .as_ref()
            .map_or_else(String::new, |p| format!(":{p}@"));
        match (&self.socket, self.port) {
            (Some(s), _) => match &self.password {
                Some(p) => format!("redis+unix://{}?pass={p}", s.display()),
                None => format!("redis+unix://{}", s.display()),
            },
            (None, Some(p)) if self.tls.is_some() => format!("rediss://{auth}127.0.0.1:{p}"),
            (None, Some(p)) => format!("redis://{auth}127.0.0.1:{p}"),
            (None, None) => unreachable!("a server listens on a port or a socket"),
        }
    }

    /// The TCP port (None for a unix socket).
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The TCP address (None for a unix socket).
    pub fn addr(&self) -> Option<SocketAddr> {
        self.port.map(|p| SocketAddr::from(([127, 0, 0, 1], p)))
    }

    /// The process id (0 while killed).
    pub fn pid(&self) -> u32 {
        if self.crashed.load(std::sync::atomic::Ordering::SeqCst) {
            return 0;
        }
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The TLS settings the server runs with.
    pub fn tls(&self) -> Option<&ServerTls> {
        self.tls.as_ref()
    }

    /// A `redis::Client` for this server (with TLS: trusting the CA, presenting the client
    /// certificate).
    pub fn client(&self) -> redis::Client {
        let opened = match &self.tls {
            Some(tls) => {
                redis::Client::build_with_tls(self.url(), tls.material.redis_certificates())
            }
            None => redis::Client::open(self.url()),
        };
        opened.unwrap_or_else(|e| panic!("bad url {}: {e}", self.url()))
    }

    /// The server log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("redis.log")).unwrap_or_default()
    }

    fn log_tail(&self, lines: usize) -> String {
        let log = self.log();
        let all: Vec<&str> = log.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// `redis_version` (or `valkey_version`) from `INFO server`.
    pub fn version(&self) -> String {
        let info: String = self
            .client()
            .get_connection()
            .and_then(|mut c| redis::cmd("INFO").arg("server").query(&mut c))
            .unwrap_or_default();
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
        };
        field("valkey_version:")
            .or_else(|| field("redis_version:"))
            .unwrap_or_else(|| "unknown".into())
    }

    /// The server's working directory (config, log, AOF).
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Stops the server (SIGTERM, SIGKILL after 5 s) and starts it again on the same port with
    /// the same data directory.
    pub fn restart(&mut self) -> Result<(), TestkitError> {
        self.stop(Duration::from_secs(5));
        self.spawn_and_wait()
    }

    /// A crash and a restart: SIGKILL (no shutdown, nothing flushed that the server had not
    /// written already), then the server starts again on the same port from its data directory
    /// and loads what it had persisted (with `appendfsync always`, every acknowledged write).
    pub fn crash_restart(&mut self) -> Result<(), TestkitError> {
        self.kill();
        self.spawn_and_wait()
    }

    /// SIGKILL and reap: the server is down until [`RedisServer::restart`].
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn stop(&mut self, grace: Duration) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        self.signal_pid(child.id(), libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// SIGKILL without reaping (so `&self` suffices, e.g. for a node of a shared cluster): the
    /// server dies as in a crash; [`RedisServer::pid`] reads 0 from now on.
    pub fn crash(&self) {
        self.signal(libc::SIGKILL);
        self.crashed
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// SIGSTOP: the server stops answering (requests queue in its socket).
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// SIGCONT: the server runs again and answers what queued.
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, sig: libc::c_int) {
        if let Some(child) = &self.child {
            self.signal_pid(child.id(), sig);
        }
    }

    fn signal_pid(&self, pid: u32, sig: libc::c_int) {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return;
        };
        // SAFETY: kill(2) on the pid of a child we own and have not reaped (so the pid cannot
        // have been reused); no memory is shared.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "--- redis-server log ({}) ---\n{}",
                self.url(),
                self.log_tail(60)
            );
        }
        self.resume();
        self.kill();
    }
}

fn config_text(
    opts: &ServerOptions,
    dir: &Path,
    port: Option<u16>,
    socket: Option<&Path>,
) -> String {
    let plain_port = if opts.tls.is_some() { None } else { port };
    let mut lines = vec![
        format!("port {}", plain_port.unwrap_or(0)),
        "bind 127.0.0.1".to_string(),
        format!("dir {}", dir.display()),
        "logfile redis.log".to_string(),
        "save \"\"".to_string(),
        format!("appendonly {}", if opts.appendonly { "yes" } else { "no" }),
        "protected-mode no".to_string(),
        "daemonize no".to_string(),
        "enable-debug-command yes".to_string(),
    ];
    if let Some(s) = socket {
        lines.push(format!("unixsocket {}", s.display()));
        lines.push("unixsocketperm 700".to_string());
    }
    if let Some(password) = &opts.password {
        lines.push(format!("requirepass {password}"));
        if !opts.sentinel {
            lines.push(format!("masterauth {password}"));
        }
    }
    if let Some(bytes) = opts.maxmemory {
        lines.push(format!("maxmemory {bytes}"));
        let policy = opts.maxmemory_policy.as_deref().unwrap_or("noeviction");
        lines.push(format!("maxmemory-policy {policy}"));
    }
    if let Some(fsync) = opts.appendfsync {
        lines.push(format!("appendfsync {}", fsync.as_str()));
    }
    if let (Some(tls), Some(port)) = (&opts.tls, port) {
        lines.extend(tls.material.server_directives(tls.auth, port));
    }
    if opts.cluster {
        lines.push("cluster-enabled yes".to_string());
        lines.push("cluster-config-file nodes.conf".to_string());
        if opts.tls.is_some() {
            lines.push("tls-cluster yes".to_string());
        }
    }
    lines.extend(opts.extra_config.iter().cloned());
    lines.join("\n") + "\n"
}
