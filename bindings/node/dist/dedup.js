"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Dedup = void 0;
// Dedup: first sightings of event ids (the library's Dedup, crates/redis-atomic/src/primitives/
// dedup.rs): one `SET key token NX PX ttl GET` per id. Nil: this call set it (first sighting);
// our own token back: our earlier attempt set it (a resend after a lost reply is still the first
// sighting); anything else: a duplicate. Retry-safe, since the token tells the attempts apart.
const client_js_1 = require("./client.js");
const errors_js_1 = require("./errors.js");
const keys_js_1 = require("./keys.js");
const locks_js_1 = require("./locks.js");
const SCHEMA = 1;
const MAX_TTL_MS = 30 * 86_400_000;
/** First sightings of one namespace's event ids. */
class Dedup {
    #client;
    #namespace;
    constructor(client, options) {
        if (typeof options !== 'object' || options === null)
            throw (0, errors_js_1.typeError)('options must be an object');
        this.#client = (0, client_js_1.live)(client);
        this.#namespace = (0, keys_js_1.namespaceOf)(options.namespace);
    }
    /** Whether this is the first sighting of `eventId` within `ttlMs`. */
    async firstSeen(eventId, ttlMs, options) {
        const k = this.keys(eventId).seen;
        if (typeof ttlMs !== 'number')
            throw (0, errors_js_1.typeError)('ttlMs must be a number');
        if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS)
            throw (0, errors_js_1.badArgument)(`ttl must be an integer number of ms in 1..=${MAX_TTL_MS}, got ${ttlMs}`);
        const token = options?.token ?? (0, locks_js_1.randomToken)();
        if (typeof token !== 'string' || token === '')
            throw (0, errors_js_1.badArgument)('token must be a non-empty string');
        const reply = await this.#client.runner.command('set', [k, token, 'NX', 'PX', ttlMs, 'GET'], { signal: options?.signal });
        return reply === null || reply === token;
    }
    /** `firstSeen` of each id, sent together. */
    async firstSeenMany(eventIds, ttlMs, options) {
        if (!Array.isArray(eventIds))
            throw (0, errors_js_1.typeError)('eventIds must be an array');
        return Promise.all(eventIds.map((id) => this.firstSeen(id, ttlMs, options)));
    }
    /** The key of `eventId`'s sighting. */
    keys(eventId) {
        if (typeof eventId !== 'string')
            throw (0, errors_js_1.typeError)('eventId must be a string');
        return { seen: (0, keys_js_1.key)(this.#namespace, 'dedup', SCHEMA, eventId) };
    }
}
exports.Dedup = Dedup;
