"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.FencedWrites = void 0;
// Fenced writes: the library's FencedWrites (crates/redis-atomic/src/primitives/fenced.rs). One
// script (`fenced_write`) compares the caller's fence with the highest fence that wrote to the
// resource and applies the writes, all or nothing, only if it is at least that; it records the
// fence. Every key carries the resource's `{tag}` (one slot). Retry-safe: a resend with the same
// fence finds it recorded and the writes are idempotent. `highest` is one GET.
const args_js_1 = require("./args.js");
const client_js_1 = require("./client.js");
const errors_js_1 = require("./errors.js");
const keys_js_1 = require("./keys.js");
const decoded_js_1 = require("./decoded.js");
const SCHEMA = 1;
const MAX_FENCE = Number.MAX_SAFE_INTEGER;
const MAX_RETENTION_MS = 365 * 86_400_000;
const MAX_WRITES = 64;
const MAX_ITEMS = 256;
const MAX_WRITE_TTL_MS = 30 * 86_400_000;
function items(what, list) {
    if (!Array.isArray(list))
        throw (0, errors_js_1.badArgument)(`a ${what} write takes a list`);
    if (list.length === 0 || list.length > MAX_ITEMS)
        throw (0, errors_js_1.badArgument)(`a write takes 1..=${MAX_ITEMS} fields or members, got ${list.length}`);
    for (const x of list)
        if (typeof x !== 'string' && !Buffer.isBuffer(x))
            throw (0, errors_js_1.typeError)(`${what}: each item must be a string or a Buffer`);
    return list;
}
/** The script's op word and the command's arguments after the key (`PX ms` for a TTL'd set). */
function command(w) {
    if (typeof w !== 'object' || w === null)
        throw (0, errors_js_1.typeError)('a write must be an object');
    if (typeof w.key !== 'string')
        throw (0, errors_js_1.typeError)('a write key must be a string');
    if (w.key === '')
        throw (0, errors_js_1.badArgument)('write key must not be empty');
    switch (w.op) {
        case 'set': {
            if (typeof w.value !== 'string' && !Buffer.isBuffer(w.value))
                throw (0, errors_js_1.badArgument)('a set write takes a value');
            return ['set', w.ttlMs === undefined ? [w.value] : [w.value, 'PX', String((0, args_js_1.msOf)('write ttl', w.ttlMs, MAX_WRITE_TTL_MS))]];
        }
        case 'hset': {
            if (typeof w.fields !== 'object' || w.fields === null)
                throw (0, errors_js_1.badArgument)('an hset write takes fields');
            const entries = Object.entries(w.fields);
            items('hset', entries.map(([, v]) => v));
            return ['hset', entries.flatMap(([k, v]) => [k, v])];
        }
        case 'hdel': return ['hdel', items('hdel', w.names)];
        case 'sadd': return ['sadd', items('sadd', w.members)];
        case 'srem': return ['srem', items('srem', w.members)];
        case 'del': return ['del', []];
        case 'expire': return ['pexpire', [String((0, args_js_1.msOf)('write ttl', w.ttlMs, MAX_WRITE_TTL_MS))]];
        default: throw (0, errors_js_1.badArgument)(`unknown write op ${String(w.op)}`);
    }
}
/** The part of `k` between the first `{` and the next `}` when non-empty, else `k` itself. */
function hashTag(k) {
    const open = k.indexOf('{');
    const close = open < 0 ? -1 : k.indexOf('}', open + 1);
    return close > open + 1 ? k.slice(open + 1, close) : k;
}
/** Fenced writes of one namespace. */
class FencedWrites {
    #client;
    #namespace;
    #retentionMs;
    constructor(client, options) {
        if (typeof options !== 'object' || options === null)
            throw (0, errors_js_1.typeError)('options must be an object');
        this.#client = (0, client_js_1.live)(client);
        this.#namespace = (0, keys_js_1.namespaceOf)(options.namespace);
        this.#retentionMs = (0, args_js_1.msOf)('retentionMs', options.retentionMs ?? 7 * 86_400_000, MAX_RETENTION_MS);
    }
    /** Applies `writes` only if `fence` is at least the highest fence that wrote to `resource`. */
    async write(resource, fence, writes) {
        if (typeof fence !== 'number')
            throw (0, errors_js_1.typeError)('fence must be a number');
        if (!Number.isInteger(fence) || fence < 1 || fence > MAX_FENCE)
            throw (0, errors_js_1.badArgument)(`fence must be in 1..=${MAX_FENCE}, got ${fence}`);
        const record = this.keys(resource).fence;
        if (!Array.isArray(writes))
            throw (0, errors_js_1.typeError)('writes must be an array');
        if (writes.length === 0 || writes.length > MAX_WRITES)
            throw (0, errors_js_1.badArgument)(`a batch takes 1..=${MAX_WRITES} writes, got ${writes.length}`);
        const spec = [];
        for (const w of writes) {
            const [op, args] = command(w);
            if (hashTag(w.key) !== resource || hashTag(w.key) === w.key) {
                throw (0, errors_js_1.badArgument)(`every key of a fenced write must carry the tag {${resource}}: ${w.key}`);
            }
            spec.push(op, String(args.length), ...args);
        }
        const targets = writes.map((w) => w.key);
        if (new Set(targets.map((k) => (0, keys_js_1.slot)(k))).size > 1)
            throw (0, errors_js_1.badArgument)('the writes span hash slots');
        const raw = await this.#client.runner.call(decoded_js_1.s.FENCED_WRITE, [record, ...targets], [String(fence), this.#retentionMs, ...spec]);
        const r = decoded_js_1.s.decodeFencedWrite(raw);
        return r.outcome === 'applied' ? { applied: true, fence: r.fence, writes: r.writes } : { applied: false, fence: r.highest, writes: 0 };
    }
    /** The highest fence that wrote to `resource` (0 if none is remembered). */
    async highest(resource) {
        const reply = await this.#client.runner.command('get', [this.keys(resource).fence]);
        if (reply === null)
            return 0;
        const n = Number(reply);
        if (!Number.isSafeInteger(n) || n < 0)
            throw new errors_js_1.WrongTypeError(`fence record: ${String(reply)} is not a fence`);
        return n;
    }
    /** A data key under `resource`'s tag: `<ns>:fenced:v1:{resource}:data:<part>`. */
    key(resource, part) {
        if (typeof resource !== 'string')
            throw (0, errors_js_1.typeError)('resource must be a string');
        if (typeof part !== 'string')
            throw (0, errors_js_1.typeError)('part must be a string');
        return (0, keys_js_1.key)(this.#namespace, 'fenced', SCHEMA, resource, ['data', part]);
    }
    /** The keys of `resource`'s fenced writes. */
    keys(resource) {
        if (typeof resource !== 'string')
            throw (0, errors_js_1.typeError)('resource must be a string');
        return { fence: (0, keys_js_1.key)(this.#namespace, 'fenced', SCHEMA, resource, ['fence']) };
    }
}
exports.FencedWrites = FencedWrites;
