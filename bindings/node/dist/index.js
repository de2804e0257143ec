"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Dedup = exports.Quotas = exports.Locks = exports.Lock = exports.LockGuard = exports.RateLimiter = exports.algorithms = exports.WrongTypeError = exports.TlsError = exports.ServerError = exports.RejectedError = exports.RedisAtomicError = exports.OutcomeUnknownError = exports.NotSentError = exports.NotReplicatedError = exports.LeaseLostError = exports.HandleEndedError = exports.CrossSlotError = exports.CostExceedsBurstError = exports.ConnectionError = exports.ClientError = exports.BadReplyError = exports.BadArgumentError = exports.AbortedError = exports.Client = void 0;
// The package's TypeScript implementation on ioredis: the same public API as the native addon's
// (index.d.ts), no native code. Each primitive runs the library's scripts (the generated layer in
// scripts.ts) with the library's key layout and retry rules.
var client_js_1 = require("./client.js");
Object.defineProperty(exports, "Client", { enumerable: true, get: function () { return client_js_1.Client; } });
var errors_js_1 = require("./errors.js");
Object.defineProperty(exports, "AbortedError", { enumerable: true, get: function () { return errors_js_1.AbortedError; } });
Object.defineProperty(exports, "BadArgumentError", { enumerable: true, get: function () { return errors_js_1.BadArgumentError; } });
Object.defineProperty(exports, "BadReplyError", { enumerable: true, get: function () { return errors_js_1.BadReplyError; } });
Object.defineProperty(exports, "ClientError", { enumerable: true, get: function () { return errors_js_1.ClientError; } });
Object.defineProperty(exports, "ConnectionError", { enumerable: true, get: function () { return errors_js_1.ConnectionError; } });
Object.defineProperty(exports, "CostExceedsBurstError", { enumerable: true, get: function () { return errors_js_1.CostExceedsBurstError; } });
Object.defineProperty(exports, "CrossSlotError", { enumerable: true, get: function () { return errors_js_1.CrossSlotError; } });
Object.defineProperty(exports, "HandleEndedError", { enumerable: true, get: function () { return errors_js_1.HandleEndedError; } });
Object.defineProperty(exports, "LeaseLostError", { enumerable: true, get: function () { return errors_js_1.LeaseLostError; } });
Object.defineProperty(exports, "NotReplicatedError", { enumerable: true, get: function () { return errors_js_1.NotReplicatedError; } });
Object.defineProperty(exports, "NotSentError", { enumerable: true, get: function () { return errors_js_1.NotSentError; } });
Object.defineProperty(exports, "OutcomeUnknownError", { enumerable: true, get: function () { return errors_js_1.OutcomeUnknownError; } });
Object.defineProperty(exports, "RedisAtomicError", { enumerable: true, get: function () { return errors_js_1.RedisAtomicError; } });
Object.defineProperty(exports, "RejectedError", { enumerable: true, get: function () { return errors_js_1.RejectedError; } });
Object.defineProperty(exports, "ServerError", { enumerable: true, get: function () { return errors_js_1.ServerError; } });
Object.defineProperty(exports, "TlsError", { enumerable: true, get: function () { return errors_js_1.TlsError; } });
Object.defineProperty(exports, "WrongTypeError", { enumerable: true, get: function () { return errors_js_1.WrongTypeError; } });
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
