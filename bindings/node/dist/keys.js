"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.MAX_TAG_LEN = void 0;
exports.namespaceOf = namespaceOf;
exports.key = key;
exports.digest = digest;
exports.slot = slot;
// Key names and hash slots, as the Rust library builds them (keys.rs): every key of one
// operation shares the `{tag}`, so one slot; user-chosen ids become a digest, so user bytes never
// reach key names. The conformance vectors check both against every face.
const node_crypto_1 = require("node:crypto");
const errors_js_1 = require("./errors.js");
/** Longest accepted tag or part, in bytes. */
exports.MAX_TAG_LEN = 512;
/** `namespace` checked: non-empty, at most MAX_TAG_LEN bytes, no `{`, `}` or `:`. */
function namespaceOf(namespace) {
    if (typeof namespace !== 'string')
        throw (0, errors_js_1.badArgument)('namespace must be a string');
    checkPart('namespace', namespace);
    if (namespace.includes(':'))
        throw (0, errors_js_1.badArgument)("namespace must not contain ':'");
    return namespace;
}
/** `<namespace>:<primitive>:v<schema>:{<tag>}` followed by `:<part>` for each part. */
function key(namespace, primitive, schema, tag, parts = []) {
    checkPart('tag', tag);
    let k = `${namespace}:${primitive}:v${schema}:{${tag}}`;
    for (const part of parts) {
        checkPart('key part', part);
        k += `:${part}`;
    }
    return k;
}
/** 128 bits of SHA-256 in hex of `value`, after checking it is 1..=max bytes. */
function digest(value, max, what) {
    const len = Buffer.byteLength(value);
    if (len === 0 || len > max)
        throw (0, errors_js_1.badArgument)(`${what} must be 1..=${max} bytes, got ${len}`);
    return (0, node_crypto_1.createHash)('sha256').update(value).digest('hex').slice(0, 32);
}
function checkPart(what, value) {
    if (value === '')
        throw (0, errors_js_1.badArgument)(`${what} must not be empty`);
    const len = Buffer.byteLength(value);
    if (len > exports.MAX_TAG_LEN)
        throw (0, errors_js_1.badArgument)(`${what} is ${len} bytes, more than ${exports.MAX_TAG_LEN}`);
    if (/[{}]/.test(value))
        throw (0, errors_js_1.badArgument)(`${what} must not contain '{' or '}' (they decide the cluster hash slot)`);
}
/** The cluster hash slot of `key`: CRC16/XMODEM of its hash tag (or the whole key), mod 16384. */
function slot(key) {
    let data = typeof key === 'string' ? Buffer.from(key) : Buffer.from(key);
    const open = data.indexOf(0x7b);
    if (open >= 0) {
        const close = data.indexOf(0x7d, open + 1);
        if (close > open + 1)
            data = data.subarray(open + 1, close);
    }
    let crc = 0;
    for (const byte of data) {
        crc ^= byte << 8;
        for (let i = 0; i < 8; i++)
            crc = (crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1) & 0xffff;
    }
    return crc % 16384;
}
