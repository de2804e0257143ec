//! Wall-clock jumps of a running server: what NTP stepping a clock, or a VM resumed on another
//! host, does to expiry, `TIME` and every timestamp a script computes.
//!
//! A server started with [`crate::ServerOptions::clock`] runs with a small `LD_PRELOAD` shim
//! (`clockshim.c`, compiled here once per machine with the system C compiler) that adds an offset
//! to `CLOCK_REALTIME`, `gettimeofday` and `time`; [`crate::RedisServer::set_clock_offset`]
//! changes the offset while the server runs. `CLOCK_MONOTONIC` is not moved, as in a real step.
//! [`crate::RedisServer::freeze_clock`] stops the wall clock at a given instant instead, so two
//! servers read the same `TIME` and expire keys alike: what a test comparing two runs of the
//! same scripts needs.
//!
//! Why a shim and not Debian's libfaketime: Debian's redis-server links jemalloc, which calls
//! `clock_gettime` while libfaketime is still initialising (it allocates inside `dlsym`);
//! libfaketime detects the recursion and the server fails to start (wolfcw/libfaketime #130,
//! #478, unfixed). The shim reads the real time with the raw syscall and its offset from a
//! shared mapping of a file, so it never allocates or resolves a symbol, and works under Redis
//! (jemalloc) and Valkey (libc malloc) alike.

use crate::error::{io, TestkitError};
use crate::server::RedisServer;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

const SOURCE: &str = include_str!("clockshim.c");

/// The environment variable the shim reads the offset file's path from.
pub(crate) const CLOCK_FILE_ENV: &str = "REDIS_ATOMIC_CLOCK_FILE";

/// Which way a server's wall clock is moved from the real time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClockShift {
    /// The server's clock reads later than the real time (a forward jump).
    Ahead,
    /// The server's clock reads earlier than the real time (a backward jump).
    Behind,
}

/// The compiled shim: `$TMPDIR/redis-atomic-clockshim-<hash of the source>.so`, built on first
/// use (`$CC`, else `cc`) and reused by later test binaries.
pub(crate) fn shim() -> Result<PathBuf, TestkitError> {
    static SHIM: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    SHIM.get_or_init(|| build().map_err(|e| e.to_string()))
        .clone()
        .map_err(TestkitError::ClockShim)
}

fn build() -> Result<PathBuf, TestkitError> {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    SOURCE.hash(&mut hasher);
    let dir = std::env::temp_dir();
    let target = dir.join(format!(
        "redis-atomic-clockshim-{:016x}.so",
        hasher.finish()
    ));
    if target.is_file() {
        return Ok(target);
    }
    let unique = format!("{}-{:08x}", std::process::id(), rand::random::<u32>());
    let source = dir.join(format!("redis-atomic-clockshim-{unique}.c"));
    let partial = dir.join(format!("redis-atomic-clockshim-{unique}.so"));
    std::fs::write(&source, SOURCE).map_err(io("write the clock shim source"))?;
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let output = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&partial)
        .arg(&source)
        .output();
    let _ = std::fs::remove_file(&source);
    let output = output.map_err(|e| {
        TestkitError::ClockShim(format!(
            "cannot run the C compiler {cc:?} ({e}); install one (apt-get install gcc) or set CC"
        ))
    })?;
    if !output.status.success() {
        return Err(TestkitError::ClockShim(format!(
            "{cc:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    // Rename is atomic: a concurrent test binary sees the old file or the whole new one.
    std::fs::rename(&partial, &target).map_err(io("install the clock shim"))?;
    Ok(target)
}

/// Creates the offset file of one server (offset 0).
pub(crate) fn create_offset_file(dir: &Path) -> Result<PathBuf, TestkitError> {
    let path = dir.join("clock-offset");
    // A whole page, so the shim's 4096-byte mapping is backed by the file.
    std::fs::write(&path, [0u8; 4096]).map_err(io("write the clock offset file"))?;
    Ok(path)
}

/// Writes `shift` × `offset` (nanoseconds, little endian) at the start of the offset file.
pub(crate) fn write_offset(
    path: &Path,
    offset: Duration,
    shift: ClockShift,
) -> Result<(), TestkitError> {
    let ns = i64::try_from(offset.as_nanos()).unwrap_or(i64::MAX);
    let ns = match shift {
        ClockShift::Ahead => ns,
        ClockShift::Behind => -ns,
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io("open the clock offset file"))?;
    // One aligned 8-byte write: the shim reads it with one aligned load.
    file.write_all_at(&ns.to_le_bytes(), 0)
        .map_err(io("write the clock offset"))
}

/// Writes the frozen instant (nanoseconds since the epoch; 0: not frozen) after the offset.
fn write_frozen(path: &Path, at_ns: i64) -> Result<(), TestkitError> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io("open the clock offset file"))?;
    file.write_all_at(&at_ns.to_le_bytes(), 8)
        .map_err(io("write the frozen clock"))
}

impl RedisServer {
    /// Stops the server's wall clock (`TIME`, expiry, every timestamp a script computes) at
    /// `at` since the epoch, or, with `None`, lets it run again (real time plus the offset).
    /// Needs [`crate::ServerOptions::clock`]. Returns once the server's `TIME` shows it (within
    /// 5 s; see [`RedisServer::set_clock_offset`] on cached clocks). A frozen clock expires
    /// nothing until it is moved: freeze it again at a later instant to let keys expire.
    pub fn freeze_clock(&self, at: Option<Duration>) -> Result<(), TestkitError> {
        let (_, file) = self.clock.as_ref().ok_or_else(|| {
            TestkitError::ClockShim("the server was not started with ServerOptions::clock".into())
        })?;
        let ns = at.map_or(0, |d| {
            i64::try_from(d.as_nanos()).unwrap_or(i64::MAX).max(1)
        });
        write_frozen(file, ns)?;
        let mut conn = self
            .client()
            .get_connection_with_timeout(Duration::from_secs(2))?;
        let mut first = None;
        let shown = || -> Result<bool, TestkitError> {
            let time: Vec<i128> = redis::cmd("TIME").query(&mut conn)?;
            let server =
                time.first().copied().unwrap_or(0) * 1_000_000 + time.get(1).copied().unwrap_or(0);
            Ok(match at {
                Some(at) => server == i128::try_from(at.as_micros()).unwrap_or(i128::MAX),
                // Running again: two readings differ.
                None => *first.get_or_insert(server) != server,
            })
        };
        crate::faults::wait(
            Duration::from_secs(5),
            "the server's TIME shows the clock",
            shown,
        )
    }

    /// Moves the server's wall clock (`TIME`, expiry, every timestamp a script computes) to the
    /// real time shifted by `offset` (not cumulative: `Duration::ZERO` undoes it). Needs
    /// [`crate::ServerOptions::clock`]. Returns once the server's `TIME` shows the new offset
    /// (within 5 s): a server caches its clock between event-loop iterations, and Valkey answers
    /// the first command after a change with the time it read before.
    pub fn set_clock_offset(
        &self,
        offset: Duration,
        shift: ClockShift,
    ) -> Result<(), TestkitError> {
        let (_, file) = self.clock.as_ref().ok_or_else(|| {
            TestkitError::ClockShim("the server was not started with ServerOptions::clock".into())
        })?;
        write_offset(file, offset, shift)?;
        let micros = i128::try_from(offset.as_micros()).unwrap_or(i128::MAX);
        let expected = match shift {
            ClockShift::Ahead => micros,
            ClockShift::Behind => -micros,
        };
        let mut conn = self
            .client()
            .get_connection_with_timeout(Duration::from_secs(2))?;
        let shown = || -> Result<bool, TestkitError> {
            let time: Vec<i128> = redis::cmd("TIME").query(&mut conn)?;
            let server =
                time.first().copied().unwrap_or(0) * 1_000_000 + time.get(1).copied().unwrap_or(0);
            let real = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i128::try_from(d.as_micros()).unwrap_or(0));
            Ok((server - real - expected).abs() < 500_000)
        };
        crate::faults::wait(
            Duration::from_secs(5),
            "the server's TIME shows the offset",
            shown,
        )
    }
}
