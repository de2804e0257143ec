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
var __exportStar = (this && this.__exportStar) || function(m, exports) {
    for (var p in m) if (p !== "default" && !Object.prototype.hasOwnProperty.call(exports, p)) __createBinding(exports, m, p);
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.Dedup = exports.Quotas = exports.Locks = exports.Lock = exports.LockGuard = exports.RateLimiter = exports.algorithms = exports.Client = void 0;
// The package's TypeScript implementation on ioredis: the same public API as the native addon's
// (index.d.ts), no native code. Each primitive runs the library's scripts (the generated layer in
// scripts.ts) with the library's key layout and retry rules.
var client_js_1 = require("./client.js");
Object.defineProperty(exports, "Client", { enumerable: true, get: function () { return client_js_1.Client; } });
__exportStar(require("./errors.js"), exports);
var ratelimit_js_1 = require("./ratelimit.js");
Object.defineProperty(exports, "algorithms", { enumerable: true, get: function () { return ratelimit_js_1.algorithms; } });
Object.defineProperty(exports, "RateLimiter", { enumerable: true, get: function () { return ratelimit_js_1.RateLimiter; } });
var locks_js_1 = require("./locks.js");
Object.defineProperty(exports, "LockGuard", { enumerable: true, get: function () { return locks_js_1.LockGuard; } });
Object.defineProperty(exports, "Lock", { enumerable: true, get: function () { return locks_js_1.LockGuard; } });
Object.defineProperty(exports, "Locks", { enumerable: true, get: function () { return locks_js_1.Locks; } });
var quotas_js_1 = require("./quotas.js");
Object.defineProperty(exports, "Quotas", { enumerable: true, get: function () { return quotas_js_1.Quotas; } });
var dedup_js_1 = require("./dedup.js");
Object.defineProperty(exports, "Dedup", { enumerable: true, get: function () { return dedup_js_1.Dedup; } });
