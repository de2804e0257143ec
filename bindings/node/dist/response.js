"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.encodeResponse = encodeResponse;
exports.decodeResponse = decodeResponse;
// Idempotency responses: what `complete` / `fail` store and a `'replay'` gives back, encoded
// byte for byte as the library's `Response::encode` (crates/redis-atomic/src/primitives/
// idempotency/response.rs), so every face reads what any face stored:
// `R1`, status u16 BE, header count u16 BE, per header name length u16 BE + name + value length
// u32 BE + value, then body kind (0: the body bytes follow; 1: a reference's UTF-8 follows).
const args_js_1 = require("./args.js");
const errors_js_1 = require("./errors.js");
function headerList(headers) {
    if (headers === undefined || headers === null)
        return [];
    if (Array.isArray(headers))
        return headers.map((h) => [String(h.name), (0, args_js_1.bytes)(`header ${String(h.name)}`, h.value)]);
    if (typeof headers !== 'object')
        throw (0, errors_js_1.typeError)('headers must be an object or an array');
    return Object.entries(headers).map(([name, value]) => [name, (0, args_js_1.bytes)(`header ${name}`, value)]);
}
/** `init` encoded as the library stores it; BadArgumentError for what it cannot hold. */
function encodeResponse(init) {
    if (typeof init !== 'object' || init === null)
        throw (0, errors_js_1.typeError)('response must be an object');
    const { status } = init;
    if (typeof status !== 'number')
        throw (0, errors_js_1.typeError)('status must be a number');
    if (!Number.isInteger(status) || status < 0 || status > 65535)
        throw (0, errors_js_1.badArgument)(`status must be 0..=65535, got ${status}`);
    if (init.body !== undefined && init.reference !== undefined)
        throw (0, errors_js_1.badArgument)('a response has a body or a reference, not both');
    const headers = headerList(init.headers);
    const tooMany = () => { throw (0, errors_js_1.badArgument)('response has too many or too large headers'); };
    if (headers.length > 65535)
        tooMany();
    const head = Buffer.alloc(6);
    head.write('R1', 0, 'latin1');
    head.writeUInt16BE(status, 2);
    head.writeUInt16BE(headers.length, 4);
    const parts = [head];
    for (const [name, value] of headers) {
        const n = Buffer.from(name);
        if (n.length > 65535 || value.length > 0xffffffff)
            tooMany();
        const nl = Buffer.alloc(2);
        nl.writeUInt16BE(n.length);
        const vl = Buffer.alloc(4);
        vl.writeUInt32BE(value.length);
        parts.push(nl, n, vl, value);
    }
    if (init.reference !== undefined) {
        if (typeof init.reference !== 'string')
            throw (0, errors_js_1.typeError)('reference must be a string');
        parts.push(Buffer.from([1]), Buffer.from(init.reference));
    }
    else {
        parts.push(Buffer.from([0]), init.body === undefined ? Buffer.alloc(0) : (0, args_js_1.bytes)('body', init.body));
    }
    return Buffer.concat(parts);
}
/** What `encodeResponse` wrote (BadReplyError for anything else). */
function decodeResponse(raw) {
    const b = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    const bad = (what) => {
        throw new errors_js_1.BadReplyError(`idempotency record: stored response: ${what}`, { script: 'idem_begin' });
    };
    if (b.length < 7 || b.toString('latin1', 0, 2) !== 'R1')
        bad('not an R1 response');
    const status = b.readUInt16BE(2);
    const count = b.readUInt16BE(4);
    let pos = 6;
    const headers = [];
    for (let i = 0; i < count; i++) {
        if (pos + 2 > b.length)
            bad('truncated');
        const n = b.readUInt16BE(pos);
        if (pos + 2 + n + 4 > b.length)
            bad('truncated');
        const name = b.toString('utf8', pos + 2, pos + 2 + n);
        pos += 2 + n;
        const v = b.readUInt32BE(pos);
        if (pos + 4 + v > b.length)
            bad('truncated');
        headers.push({ name, value: Buffer.from(b.subarray(pos + 4, pos + 4 + v)) });
        pos += 4 + v;
    }
    if (pos >= b.length)
        bad('no body kind');
    const kind = b[pos];
    const rest = Buffer.from(b.subarray(pos + 1));
    if (kind === 0)
        return { status, headers, body: rest };
    if (kind === 1)
        return { status, headers, reference: rest.toString('utf8') };
    return bad('unknown body kind');
}
