//! redis-atomic's server module: the hot decisions as native commands of a Redis (≥ 7.0) or
//! Valkey (≥ 8) server, each deciding exactly as its Lua script does.
//!
//! # Why a module
//! A script's `redis.call`s cost most of a decision's server time; a native command reads and
//! writes the key directly (the module key API); the natives over sorted sets and hashes
//! (semaphore, sliding log) run the script's commands in its order through `RedisModule_Call`
//! ([`command`]): less gain, and no doubt that the state is the script's. The scripts stay the default and the source of
//! truth: every native here mirrors one script step by step (same keys, same stored values and
//! expiries, same replies, the same checks in the same order with the same messages, Lua's number
//! semantics in [`lua`]), and the equivalence test runs both against servers whose clocks are
//! frozen at the same instants and compares replies and `DUMP`/`PTTL` of every key. A client
//! uses a native only when `RATOMIC.VERSION` reports the same version as its script's header.
//!
//! # Commands
//! `RATOMIC.<SCRIPT> keys... args...`: the script's name, its `KEYS` then its `ARGV` in header
//! order (no numkeys: every native but one has a fixed key count, declared to the server as
//! first/last/step so Cluster routes and checks it). `RATOMIC.RL_POLICY` (policies and the entry
//! limiter) takes the number of its variadic keys after its first key, and declares its positions
//! through the getkeys API: on Redis 7.0 to 8 and Valkey, Cluster finds a module command's keys
//! with that API or the first/last/step triple, never with key specs ([`policy`]). `RATOMIC.VERSION`: `["module", <crate version>, <script>,
//! <version>, ...]`.
//!
//! # Why a thin FFI of our own, not `redis-module` / `valkey-module`
//! Those crates generate their bindings with bindgen at build time (libclang on every build
//! machine; it is not installed here) and pull an allocator shim and macros we do not need; one is
//! Redis-only, the other Valkey-only by name. The module needs about twenty calls of a C API that
//! has kept its signatures since API version 1, which `RedisModule_Init` itself looks up by name
//! through the pointer the server puts first in the load context: [`ffi`] does the same, so one
//! `.so` loads on Redis 7.0 through 8 and on Valkey, and the calls a server lacks (Redis 7.0 has no
//! `GetAbsExpire`) are optional. No allocator override: Rust's allocations are its own, freed by
//! it; nothing crosses the boundary that the server would free.
//!
//! # Safety rules
//! Unsafe code is allowed only in [`ffi`], [`server`], [`command`] and [`lua`] (C calls) and the
//! entry points below, each allowance marked where it is (the workspace denies it elsewhere). No panic crosses the boundary: every entry point
//! runs under `catch_unwind` and answers an error instead. Every argument is validated as the
//! script validates it; a malformed call is an error reply. Allocations are bounded by the
//! arguments and values read (nothing grows with a number a caller sends).
//!
//! # Replication
//! Writes are replicated as their effects (`RedisModule_Replicate` of `SET … PXAT`,
//! `SET … KEEPTTL`, `PEXPIREAT`, `DEL`), never the command itself: a replica or the AOF never
//! recomputes a decision with its own clock. Expiries are absolute on the wire; on Redis 7.0
//! (no `GetAbsExpire`) the absolute time is the server's `Milliseconds()` plus the relative
//! expiry, read in the same millisecond as the server applies it.
mod anchored;
#[allow(unsafe_code)] // C calls (Safety rules above)
mod command;
mod counters;
#[allow(unsafe_code)] // C calls (Safety rules above)
mod ffi;
mod idem;
mod lock;
#[allow(unsafe_code)] // C calls (Safety rules above)
mod lua;
mod policy;
mod quota;
mod record;
mod reply;
mod rl;
mod sem;
#[allow(unsafe_code)] // C calls (Safety rules above)
mod server;
mod sliding_log;
mod version;

use ffi::{Ctx, RString};
use reply::Out;
use server::Call;
use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

pub use version::NATIVES;

/// One native command: its name, handler, flags and key positions.
struct Command {
    name: &'static CStr,
    run: fn(&Call) -> Out,
    flags: &'static CStr,
    /// first, last, step; (0, 0, 0) with `getkeys`.
    keys: (c_int, c_int, c_int),
    /// The key positions of a call whose key count varies (flag `getkeys-api`: the server asks
    /// the command itself, for Cluster's routing and checks, ACLs and `COMMAND GETKEYS`).
    getkeys: Option<fn(&Call) -> Vec<usize>>,
}

const WRITE: &CStr = c"write deny-oom";

/// A write command of one key (the state) at position 1.
const fn one_key(name: &'static CStr, run: fn(&Call) -> Out) -> Command {
    Command {
        name,
        run,
        flags: WRITE,
        keys: (1, 1, 1),
        getkeys: None,
    }
}

const COMMANDS: &[Command] = &[
    Command {
        name: c"ratomic.version",
        run: version::reply,
        flags: c"readonly fast",
        keys: (0, 0, 0),
        getkeys: None,
    },
    one_key(c"ratomic.rl_fixed_window", |c| {
        rl::decide(c, rl::Algo::FixedWindow)
    }),
    one_key(c"ratomic.rl_gcra", |c| rl::decide(c, rl::Algo::Gcra)),
    one_key(c"ratomic.rl_token_bucket", |c| {
        rl::decide(c, rl::Algo::TokenBucket)
    }),
    one_key(c"ratomic.rl_sliding_window", |c| {
        rl::decide(c, rl::Algo::SlidingWindow)
    }),
    one_key(c"ratomic.rl_sliding_log", |c| {
        rl::decide(c, rl::Algo::SlidingLog)
    }),
    one_key(c"ratomic.rl_anchored_window", anchored::decide),
    // lock and fence: keys 1 and 2.
    Command {
        name: c"ratomic.lock_acquire",
        run: lock::acquire,
        flags: WRITE,
        keys: (1, 2, 1),
        getkeys: None,
    },
    one_key(c"ratomic.lock_release", lock::release),
    one_key(c"ratomic.lock_extend", lock::extend),
    one_key(c"ratomic.quota_add", quota::add),
    one_key(c"ratomic.idem_begin", idem::begin),
    // permits, holders and fence: keys 1 to 3; permits and holders: keys 1 and 2.
    Command {
        name: c"ratomic.sem_acquire",
        run: sem::acquire,
        flags: WRITE,
        keys: (1, 3, 1),
        getkeys: None,
    },
    Command {
        name: c"ratomic.sem_release",
        run: sem::release,
        flags: WRITE,
        keys: (1, 2, 1),
        getkeys: None,
    },
    // counter and request record: keys 1 and 2.
    Command {
        name: c"ratomic.quota_add_id",
        run: quota::add_id,
        flags: WRITE,
        keys: (1, 2, 1),
        getkeys: None,
    },
    // the request key, then the limit keys the count declares.
    Command {
        name: c"ratomic.rl_policy",
        run: policy::decide,
        flags: c"write deny-oom getkeys-api",
        keys: (0, 0, 0),
        getkeys: Some(policy::key_positions),
    },
];

/// Runs command `index` of [`COMMANDS`] under `catch_unwind`.
///
/// # Safety
/// The arguments must be what the server passed to a command handler.
#[allow(unsafe_code)] // an entry point (Safety rules above)
unsafe fn entry(index: usize, ctx: *mut Ctx, argv: *mut *mut RString, argc: c_int) -> c_int {
    let Some(api) = ffi::api() else {
        return ffi::ERR;
    };
    let call = Call::new(api, ctx, argv, argc);
    let cmd = COMMANDS.get(index);
    if let Some(getkeys) = cmd.and_then(|c| c.getkeys) {
        if call.keys_requested() {
            let reported = catch_unwind(AssertUnwindSafe(|| call.report_keys(&getkeys(&call))));
            return if reported.is_ok() { ffi::OK } else { ffi::ERR };
        }
    }
    let out = catch_unwind(AssertUnwindSafe(|| match cmd {
        Some(cmd) => (cmd.run)(&call),
        None => Out::bad("unknown command"),
    }));
    let out = out.unwrap_or_else(|_| {
        Out::bad("internal error in the module (nothing was decided after it)")
    });
    let sent = catch_unwind(AssertUnwindSafe(|| call.reply(&out)));
    if sent.is_err() {
        return ffi::ERR;
    }
    ffi::OK
}

macro_rules! handlers {
    ($($i:literal => $f:ident),* $(,)?) => {
        $(
            #[allow(unsafe_code)] // an entry point (Safety rules above)
            unsafe extern "C" fn $f(ctx: *mut Ctx, argv: *mut *mut RString, argc: c_int) -> c_int {
                // SAFETY: the server's handler arguments, passed on.
                unsafe { entry($i, ctx, argv, argc) }
            }
        )*
        const HANDLERS: &[ffi::CmdFunc] = &[$($f),*];
    };
}

handlers!(0 => h0, 1 => h1, 2 => h2, 3 => h3, 4 => h4, 5 => h5, 6 => h6, 7 => h7, 8 => h8, 9 => h9, 10 => h10, 11 => h11, 12 => h12, 13 => h13, 14 => h14, 15 => h15);

/// The server calls this once when it loads the module.
///
/// # Safety
/// Called by the server with its load context.
#[allow(unsafe_code)] // the entry point the server looks up (Safety rules above)
#[no_mangle]
pub unsafe extern "C" fn RedisModule_OnLoad(
    ctx: *mut Ctx,
    _argv: *mut *mut RString,
    _argc: c_int,
) -> c_int {
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the load context.
        let api = unsafe { ffi::init(ctx) }.ok()?;
        // SAFETY: a valid context and C strings.
        unsafe {
            (api.set_module_attribs)(
                ctx,
                c"ratomic".as_ptr(),
                version::MODULE_VERSION,
                ffi::APIVER_1,
            );
            // Signals only for keys written (server::OpenKey), so one open serves a decision.
            (api.set_module_options)(ctx, ffi::NO_IMPLICIT_SIGNAL_MODIFIED);
        };
        for (cmd, handler) in COMMANDS.iter().zip(HANDLERS) {
            let (first, last, step) = cmd.keys;
            // SAFETY: as above; the handler has the C signature.
            let rc = unsafe {
                (api.create_command)(
                    ctx,
                    cmd.name.as_ptr(),
                    *handler,
                    cmd.flags.as_ptr(),
                    first,
                    last,
                    step,
                )
            };
            if rc != ffi::OK {
                return None;
            }
        }
        Some(())
    }));
    match loaded {
        Ok(Some(())) if HANDLERS.len() == COMMANDS.len() => ffi::OK,
        _ => ffi::ERR,
    }
}
