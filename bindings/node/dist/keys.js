"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.MAX_TAG_LEN = void 0;
exports.namespaceOf = namespaceOf;
exports.key = key;
exports.digest = digest;
exports.slot = slot;
// Key names and hash slots, as the Rust library builds them (keys.rs): every key of one
// operation shares the `{tag}`, so one slot; user-chosen ids become a digest, so user bytes never
// reach key names. The conformance vectors check both against every face.
const crypto = __importStar(require("node:crypto"));
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
    return sha256hex(value).slice(0, 32);
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
/** SHA-256 in hex: `crypto.hash` where Node has it (one call, no Hash object), else createHash. */
const sha256hex = typeof crypto.hash === 'function'
    ? (value) => crypto.hash('sha256', value, 'hex')
    : (value) => crypto.createHash('sha256').update(value).digest('hex');
