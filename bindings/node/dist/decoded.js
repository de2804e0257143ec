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
exports.s = void 0;
// The generated script layer as the primitives use it: every decoder's BadReplyError becomes the
// package's. The generated file stands alone (the same emitter writes a user's own folder, where
// it is the only error class), so its BadReplyError is a plain Error; a primitive handing it on
// would give its caller an error outside the package's classes (no `RedisAtomicError`, no
// `retrySafe`) for a corrupted or foreign reply. One wrapper per decoder, made once at load.
const generated = __importStar(require("./scripts.js"));
const errors_js_1 = require("./errors.js");
/** The generated layer, its `decode*` functions adopted; everything else as generated. */
exports.s = adopt(generated);
function adopt(layer) {
    const out = { ...layer };
    for (const [name, value] of Object.entries(layer)) {
        if (name.startsWith('decode') && typeof value === 'function') {
            out[name] = adopted(value);
        }
    }
    return out;
}
function adopted(decode) {
    return (raw) => {
        try {
            return decode(raw);
        }
        catch (e) {
            if (e instanceof generated.BadReplyError)
                throw new errors_js_1.BadReplyError(e.message, { script: e.script });
            throw e;
        }
    };
}
