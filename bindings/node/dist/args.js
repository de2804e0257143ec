"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.msOf = msOf;
exports.bytes = bytes;
// Argument checks several primitives share (one message per mistake, whichever primitive saw it).
const errors_js_1 = require("./errors.js");
/** A duration in whole ms within `min..=max`: TypeError for a non-number, BadArgumentError else. */
function msOf(what, ms, max, min = 1) {
    if (typeof ms !== 'number')
        throw (0, errors_js_1.typeError)(`${what} must be a number of ms`);
    if (!Number.isInteger(ms) || ms < min || ms > max)
        throw (0, errors_js_1.badArgument)(`${what} must be an integer number of ms in ${min}..=${max}, got ${ms}`);
    return ms;
}
/** A string (as UTF-8) or a Buffer, as bytes. */
function bytes(what, v) {
    if (typeof v === 'string')
        return Buffer.from(v);
    if (Buffer.isBuffer(v))
        return v;
    throw (0, errors_js_1.typeError)(`${what} must be a string or a Buffer`);
}
