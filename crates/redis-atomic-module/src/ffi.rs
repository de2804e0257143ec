//! The server's module API, as `redismodule.h` hands it out: a table of function pointers that
//! `RedisModule_Init` fills by name through the `GetApi` pointer the server stores first in the
//! load context. Only the calls this module makes are declared, with the C signatures of
//! `redismodule.h` (stable since API version 1; the three marked optional arrived in Redis 7.2
//! and are used only when the server has them). Nothing here decides anything: [`crate::server`]
//! wraps these pointers in safe calls.
//!
//! Unsafe code lives here, in [`crate::server`], [`crate::command`] and [`crate::lua`] only (the
//! crate's documented allowance).

// Each lookup's transmute target is the field's declared type (the table below), which the
// macro cannot spell.
#![allow(clippy::missing_transmute_annotations)]

use std::ffi::{c_char, c_int, c_long, c_longlong, c_void};
use std::sync::OnceLock;

/// `RedisModuleCtx` (opaque).
#[repr(C)]
pub struct Ctx {
    _private: [u8; 0],
}

/// `RedisModuleString` (opaque).
#[repr(C)]
pub struct RString {
    _private: [u8; 0],
}

/// `RedisModuleKey` (opaque).
#[repr(C)]
pub struct Key {
    _private: [u8; 0],
}

/// `RedisModuleCallReply` (opaque).
#[repr(C)]
pub struct CallReply {
    _private: [u8; 0],
}

/// `REDISMODULE_REPLY_STRING`.
pub const REPLY_STRING: c_int = 0;
/// `REDISMODULE_REPLY_ERROR`.
pub const REPLY_ERROR: c_int = 1;
/// `REDISMODULE_REPLY_INTEGER`.
pub const REPLY_INTEGER: c_int = 2;
/// `REDISMODULE_REPLY_ARRAY`.
pub const REPLY_ARRAY: c_int = 3;

/// `REDISMODULE_OK`.
pub const OK: c_int = 0;
/// `REDISMODULE_ERR`.
pub const ERR: c_int = 1;
/// `REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED`: a key is signalled modified only when the
/// module says so (`SignalModifiedKey`), not on every close of a key opened for writing.
pub const NO_IMPLICIT_SIGNAL_MODIFIED: c_int = 1 << 1;
/// `REDISMODULE_APIVER_1`.
pub const APIVER_1: c_int = 1;
/// `REDISMODULE_READ`.
pub const READ: c_int = 1;
/// `REDISMODULE_WRITE`.
pub const WRITE: c_int = 2;
/// `REDISMODULE_KEYTYPE_EMPTY`.
pub const KEYTYPE_EMPTY: c_int = 0;
/// `REDISMODULE_KEYTYPE_STRING`.
pub const KEYTYPE_STRING: c_int = 1;
/// `REDISMODULE_NO_EXPIRE`.
pub const NO_EXPIRE: c_longlong = -1;

/// A command's handler: `int (*)(RedisModuleCtx *, RedisModuleString **, int)`.
pub type CmdFunc = unsafe extern "C" fn(*mut Ctx, *mut *mut RString, c_int) -> c_int;
type GetApiFn = unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int;

/// The calls this module makes. Field names are `redismodule.h`'s without `RedisModule_`.
pub struct Api {
    pub set_module_attribs: unsafe extern "C" fn(*mut Ctx, *const c_char, c_int, c_int),
    pub create_command: unsafe extern "C" fn(
        *mut Ctx,
        *const c_char,
        CmdFunc,
        *const c_char,
        c_int,
        c_int,
        c_int,
    ) -> c_int,
    pub string_ptr_len: unsafe extern "C" fn(*const RString, *mut usize) -> *const c_char,
    pub open_key: unsafe extern "C" fn(*mut Ctx, *mut RString, c_int) -> *mut Key,
    pub close_key: unsafe extern "C" fn(*mut Key),
    pub key_type: unsafe extern "C" fn(*mut Key) -> c_int,
    pub delete_key: unsafe extern "C" fn(*mut Key) -> c_int,
    pub string_dma: unsafe extern "C" fn(*mut Key, *mut usize, c_int) -> *mut c_char,
    pub string_truncate: unsafe extern "C" fn(*mut Key, usize) -> c_int,
    pub get_expire: unsafe extern "C" fn(*mut Key) -> c_longlong,
    pub set_expire: unsafe extern "C" fn(*mut Key, c_longlong) -> c_int,
    pub reply_with_error: unsafe extern "C" fn(*mut Ctx, *const c_char) -> c_int,
    pub reply_with_array: unsafe extern "C" fn(*mut Ctx, c_long) -> c_int,
    pub reply_with_long_long: unsafe extern "C" fn(*mut Ctx, c_longlong) -> c_int,
    pub reply_with_string_buffer: unsafe extern "C" fn(*mut Ctx, *const c_char, usize) -> c_int,
    pub wrong_arity: unsafe extern "C" fn(*mut Ctx) -> c_int,
    pub replicate: unsafe extern "C" fn(*mut Ctx, *const c_char, *const c_char, ...) -> c_int,
    pub milliseconds: unsafe extern "C" fn() -> c_longlong,
    pub call: unsafe extern "C" fn(*mut Ctx, *const c_char, *const c_char, ...) -> *mut CallReply,
    pub call_reply_type: unsafe extern "C" fn(*mut CallReply) -> c_int,
    pub call_reply_string_ptr: unsafe extern "C" fn(*mut CallReply, *mut usize) -> *const c_char,
    pub call_reply_integer: unsafe extern "C" fn(*mut CallReply) -> c_longlong,
    pub call_reply_length: unsafe extern "C" fn(*mut CallReply) -> usize,
    pub call_reply_array_element: unsafe extern "C" fn(*mut CallReply, usize) -> *mut CallReply,
    pub free_call_reply: unsafe extern "C" fn(*mut CallReply),
    pub is_keys_position_request: unsafe extern "C" fn(*mut Ctx) -> c_int,
    pub key_at_pos: unsafe extern "C" fn(*mut Ctx, c_int),
    pub set_module_options: unsafe extern "C" fn(*mut Ctx, c_int),
    pub signal_modified_key: unsafe extern "C" fn(*mut Ctx, *mut RString) -> c_int,
    /// Redis ≥ 7.2, Valkey: the key's absolute expiry (exact replication of a relative one).
    pub get_abs_expire: Option<unsafe extern "C" fn(*mut Key) -> c_longlong>,
}

static API: OnceLock<Api> = OnceLock::new();

/// The table, once [`init`] filled it (every command runs after `OnLoad`, so it always is).
pub fn api() -> Option<&'static Api> {
    API.get()
}

/// Looks one name up; null when the server lacks it.
///
/// # Safety
/// `get` must be the server's `RedisModule_GetApi`.
unsafe fn lookup(get: GetApiFn, name: &std::ffi::CStr) -> *mut c_void {
    let mut ptr: *mut c_void = std::ptr::null_mut();
    let rc = get(name.as_ptr(), (&mut ptr as *mut *mut c_void).cast());
    if rc == OK {
        ptr
    } else {
        std::ptr::null_mut()
    }
}

macro_rules! required {
    ($get:expr, $name:literal) => {{
        let p = lookup($get, $name);
        if p.is_null() {
            return Err(concat!("the server lacks ", stringify!($name)));
        }
        // SAFETY: the server hands out this name's function, of the C signature declared above.
        std::mem::transmute::<*mut c_void, _>(p)
    }};
}

/// `RedisModule_Init`'s work: fills the table from the load context.
///
/// # Safety
/// `ctx` must be the context the server passed to `RedisModule_OnLoad`.
pub unsafe fn init(ctx: *mut Ctx) -> Result<&'static Api, &'static str> {
    if let Some(api) = API.get() {
        return Ok(api);
    }
    // redismodule.h: `void *getapifuncptr = ((void**)ctx)[0];`
    let first = *(ctx as *const *mut c_void);
    if first.is_null() {
        return Err("no GetApi pointer in the load context");
    }
    let get: GetApiFn = std::mem::transmute::<*mut c_void, GetApiFn>(first);
    let abs = lookup(get, c"RedisModule_GetAbsExpire");
    let api = Api {
        set_module_attribs: required!(get, c"RedisModule_SetModuleAttribs"),
        create_command: required!(get, c"RedisModule_CreateCommand"),
        string_ptr_len: required!(get, c"RedisModule_StringPtrLen"),
        open_key: required!(get, c"RedisModule_OpenKey"),
        close_key: required!(get, c"RedisModule_CloseKey"),
        key_type: required!(get, c"RedisModule_KeyType"),
        delete_key: required!(get, c"RedisModule_DeleteKey"),
        string_dma: required!(get, c"RedisModule_StringDMA"),
        string_truncate: required!(get, c"RedisModule_StringTruncate"),
        get_expire: required!(get, c"RedisModule_GetExpire"),
        set_expire: required!(get, c"RedisModule_SetExpire"),
        reply_with_error: required!(get, c"RedisModule_ReplyWithError"),
        reply_with_array: required!(get, c"RedisModule_ReplyWithArray"),
        reply_with_long_long: required!(get, c"RedisModule_ReplyWithLongLong"),
        reply_with_string_buffer: required!(get, c"RedisModule_ReplyWithStringBuffer"),
        wrong_arity: required!(get, c"RedisModule_WrongArity"),
        replicate: required!(get, c"RedisModule_Replicate"),
        milliseconds: required!(get, c"RedisModule_Milliseconds"),
        call: required!(get, c"RedisModule_Call"),
        call_reply_type: required!(get, c"RedisModule_CallReplyType"),
        call_reply_string_ptr: required!(get, c"RedisModule_CallReplyStringPtr"),
        call_reply_integer: required!(get, c"RedisModule_CallReplyInteger"),
        call_reply_length: required!(get, c"RedisModule_CallReplyLength"),
        call_reply_array_element: required!(get, c"RedisModule_CallReplyArrayElement"),
        free_call_reply: required!(get, c"RedisModule_FreeCallReply"),
        is_keys_position_request: required!(get, c"RedisModule_IsKeysPositionRequest"),
        key_at_pos: required!(get, c"RedisModule_KeyAtPos"),
        set_module_options: required!(get, c"RedisModule_SetModuleOptions"),
        signal_modified_key: required!(get, c"RedisModule_SignalModifiedKey"),
        get_abs_expire: (!abs.is_null()).then(|| {
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut Key) -> c_longlong>(abs)
        }),
    };
    Ok(API.get_or_init(|| api))
}
