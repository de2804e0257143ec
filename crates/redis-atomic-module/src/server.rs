//! Safe calls over [`crate::ffi`]: a command's arguments, its keys (opened and closed around each
//! step, as a script's `redis.call`s are separate), its reply and the effects it replicates.
//! Every pointer the server hands a command is valid for the command's duration; every slice
//! borrowed from a key lives no longer than the key's handle, and a write needs `&mut` (so no
//! borrowed value survives it).

use crate::ffi::{self, Api, Ctx, Key, RString};
use crate::reply::{Item, Out};
use std::ffi::{c_char, c_int, CString};

/// One running command: its context and arguments (`argv[0]` is the command's name).
pub struct Call {
    api: &'static Api,
    ctx: *mut Ctx,
    argv: *mut *mut RString,
    argc: usize,
}

/// What a key holds, as far as a decision cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No such key (or expired).
    Empty,
    /// A string.
    String,
    /// Anything else: `WRONGTYPE` for a command that reads a string.
    Other,
}

/// An open key; closed on drop, and signalled as modified then (`WATCH`, client-side caching)
/// only if it was written: the module loads with implicit signals off, so a key opened for
/// writing that a refusal leaves alone is not touched, as a script's `GET` touches nothing.
pub struct OpenKey<'a> {
    call: &'a Call,
    key: *mut Key,
    index: usize,
    written: bool,
}

impl Call {
    /// Wraps a handler's arguments.
    ///
    /// # Safety
    /// `ctx`, `argv` and `argc` must be what the server passed to a command handler.
    pub unsafe fn new(
        api: &'static Api,
        ctx: *mut Ctx,
        argv: *mut *mut RString,
        argc: c_int,
    ) -> Self {
        let argc = usize::try_from(argc).unwrap_or(0);
        Call {
            api,
            ctx,
            argv,
            argc,
        }
    }

    /// The module API table.
    pub fn api(&self) -> &'static Api {
        self.api
    }

    /// The command's context.
    pub fn ctx(&self) -> *mut Ctx {
        self.ctx
    }

    /// The number of arguments after the command's name.
    pub fn len(&self) -> usize {
        self.argc.saturating_sub(1)
    }

    fn raw(&self, i: usize) -> *mut RString {
        // SAFETY: i + 1 < argc (callers index by `len`), argv has argc entries.
        unsafe { *self.argv.add(i + 1) }
    }

    /// Argument `i` (0-based, after the name) as bytes.
    pub fn arg(&self, i: usize) -> &[u8] {
        if i >= self.len() {
            return &[];
        }
        let mut len = 0usize;
        // SAFETY: a valid module string; the buffer lives as long as the command (argv).
        unsafe {
            let ptr = (self.api.string_ptr_len)(self.raw(i), &mut len);
            if ptr.is_null() {
                return &[];
            }
            std::slice::from_raw_parts(ptr.cast::<u8>(), len)
        }
    }

    /// Opens argument `i` as a key for reading (a read-only open counts a keyspace hit or miss,
    /// as a script's `GET` does).
    pub fn key(&self, i: usize) -> OpenKey<'_> {
        self.open(i, ffi::READ)
    }

    /// Opens argument `i` as a key for reading and writing (signalled as modified only when
    /// written: [`OpenKey`]).
    pub fn key_mut(&self, i: usize) -> OpenKey<'_> {
        self.open(i, ffi::READ | ffi::WRITE)
    }

    fn open(&self, i: usize, mode: c_int) -> OpenKey<'_> {
        // SAFETY: a valid context and module string; the handle is closed on drop.
        let key = unsafe { (self.api.open_key)(self.ctx, self.raw(i), mode) };
        OpenKey {
            call: self,
            key,
            index: i,
            written: false,
        }
    }

    /// The server's wall clock in microseconds (what `TIME` answers: `gettimeofday`).
    pub fn now_us(&self) -> f64 {
        let mut tv = libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        };
        // SAFETY: a valid out-pointer; no timezone.
        unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
        (tv.tv_sec as f64) * 1_000_000.0 + tv.tv_usec as f64
    }

    /// The server's clock in milliseconds, as it computes relative expiries.
    pub fn now_ms(&self) -> i64 {
        // SAFETY: no arguments.
        unsafe { (self.api.milliseconds)() }
    }

    /// Whether the server asks for the key positions (a `getkeys-api` command), not a run.
    pub fn keys_requested(&self) -> bool {
        // SAFETY: a valid context.
        unsafe { (self.api.is_keys_position_request)(self.ctx) != 0 }
    }

    /// Answers a key-positions request: `positions` index the arguments, the name at 0.
    pub fn report_keys(&self, positions: &[usize]) {
        for &pos in positions.iter().filter(|&&p| p < self.argc) {
            let Ok(pos) = c_int::try_from(pos) else {
                continue;
            };
            // SAFETY: a valid context in a key-positions request; pos < argc.
            unsafe { (self.api.key_at_pos)(self.ctx, pos) };
        }
    }

    /// Sends `out` as the reply.
    pub fn reply(&self, out: &Out) {
        let api = self.api;
        // SAFETY: a valid context; every buffer outlives its call.
        unsafe {
            match out {
                Out::Error(text) => {
                    let c = c_text(text);
                    (api.reply_with_error)(self.ctx, c.as_ptr());
                }
                Out::WrongArity => {
                    (api.wrong_arity)(self.ctx);
                }
                Out::Array(items) => {
                    (api.reply_with_array)(self.ctx, items.len() as std::ffi::c_long);
                    for item in items {
                        match item {
                            Item::Int(n) => (api.reply_with_long_long)(self.ctx, *n),
                            Item::Bulk(b) => (api.reply_with_string_buffer)(
                                self.ctx,
                                b.as_ptr().cast::<c_char>(),
                                b.len(),
                            ),
                        };
                    }
                }
            }
        }
    }

    /// Replicates `SET key value PXAT at` (or `KEEPTTL` when `at` is None).
    pub fn replicate_set(&self, key: usize, value: &[u8], at: Option<i64>) {
        let (k, v, n) = (self.raw(key), value.as_ptr().cast::<c_char>(), value.len());
        // SAFETY: the format matches the arguments ('s' string, 'b' buffer + length, 'c' C
        // string, 'l' long long).
        unsafe {
            match at {
                Some(at) => (self.api.replicate)(
                    self.ctx,
                    c"SET".as_ptr(),
                    c"sbcl".as_ptr(),
                    k,
                    v,
                    n,
                    c"PXAT".as_ptr(),
                    at,
                ),
                None => (self.api.replicate)(
                    self.ctx,
                    c"SET".as_ptr(),
                    c"sbc".as_ptr(),
                    k,
                    v,
                    n,
                    c"KEEPTTL".as_ptr(),
                ),
            };
        }
    }

    /// Replicates `PEXPIREAT key at`.
    pub fn replicate_pexpireat(&self, key: usize, at: i64) {
        // SAFETY: as in replicate_set.
        unsafe {
            (self.api.replicate)(
                self.ctx,
                c"PEXPIREAT".as_ptr(),
                c"sl".as_ptr(),
                self.raw(key),
                at,
            );
        }
    }

    /// Replicates `DEL key`.
    pub fn replicate_del(&self, key: usize) {
        // SAFETY: as in replicate_set.
        unsafe {
            (self.api.replicate)(self.ctx, c"DEL".as_ptr(), c"s".as_ptr(), self.raw(key));
        }
    }
}

/// An error text as a C string: cut at the first NUL (the server would stop there anyway).
fn c_text(text: &[u8]) -> CString {
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    CString::new(&text[..end]).unwrap_or_default()
}

impl OpenKey<'_> {
    /// What the key holds.
    pub fn kind(&self) -> Kind {
        if self.key.is_null() {
            return Kind::Empty;
        }
        // SAFETY: an open key.
        match unsafe { (self.call.api.key_type)(self.key) } {
            ffi::KEYTYPE_EMPTY => Kind::Empty,
            ffi::KEYTYPE_STRING => Kind::String,
            _ => Kind::Other,
        }
    }

    /// The string value (None when empty or not a string).
    pub fn value(&self) -> Option<&[u8]> {
        if self.kind() != Kind::String {
            return None;
        }
        let mut len = 0usize;
        // SAFETY: a string key opened for reading; the buffer lives until the key changes or
        // closes, and both need `&mut self` or drop, after this borrow ends.
        unsafe {
            let ptr = (self.call.api.string_dma)(self.key, &mut len, ffi::READ);
            if ptr.is_null() {
                return None;
            }
            Some(std::slice::from_raw_parts(ptr.cast::<u8>(), len))
        }
    }

    /// Remaining life in ms (`PTTL`'s answer for a present key: -1 without expiry).
    pub fn pttl(&self) -> i64 {
        if self.kind() == Kind::Empty {
            return -2;
        }
        // SAFETY: an open key.
        let ms = unsafe { (self.call.api.get_expire)(self.key) };
        if ms == ffi::NO_EXPIRE {
            -1
        } else {
            ms.max(0)
        }
    }

    /// Writes `value` as the key's string, keeping its expiry (`SET … KEEPTTL`; a new key has none).
    pub fn write(&mut self, value: &[u8]) -> bool {
        if self.key.is_null() || self.kind() == Kind::Other {
            return false;
        }
        let api = self.call.api;
        // SAFETY: a string (or empty) key opened for writing; the DMA buffer holds value.len()
        // bytes after the truncate.
        unsafe {
            if (api.string_truncate)(self.key, value.len()) != ffi::OK {
                return false;
            }
            let mut len = 0usize;
            let ptr = (api.string_dma)(self.key, &mut len, ffi::WRITE);
            if ptr.is_null() || len != value.len() {
                return false;
            }
            std::ptr::copy_nonoverlapping(value.as_ptr(), ptr.cast::<u8>(), len);
        }
        self.written = true;
        true
    }

    /// Sets the key's expiry `ms` from now (`PEXPIRE`); returns the absolute expiry to replicate.
    pub fn expire_in(&mut self, ms: i64) -> i64 {
        let api = self.call.api;
        let before = self.call.now_ms();
        self.written = true;
        // SAFETY: an open, present key.
        unsafe {
            (api.set_expire)(self.key, ms);
            match api.get_abs_expire {
                Some(abs) => abs(self.key),
                None => before + ms,
            }
        }
    }

    /// Deletes the key.
    pub fn delete(&mut self) {
        if !self.key.is_null() {
            // SAFETY: an open key.
            unsafe { (self.call.api.delete_key)(self.key) };
            self.written = true;
        }
    }
}

impl Drop for OpenKey<'_> {
    fn drop(&mut self) {
        if self.written {
            // SAFETY: a valid context and the key's name (an argument of the command).
            unsafe {
                (self.call.api.signal_modified_key)(self.call.ctx, self.call.raw(self.index))
            };
        }
        if !self.key.is_null() {
            // SAFETY: opened by Call::key, closed once.
            unsafe { (self.call.api.close_key)(self.key) };
        }
    }
}
