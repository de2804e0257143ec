import { type Client } from './client.js';
export interface DedupOptions {
    namespace: string;
}
export interface SightingOptions {
    token?: string;
    signal?: AbortSignal;
}
export interface DedupKeys {
    seen: string;
}
/** First sightings of one namespace's event ids. */
export declare class Dedup {
    #private;
    constructor(client: Client, options: DedupOptions);
    /** Whether this is the first sighting of `eventId` within `ttlMs`. */
    firstSeen(eventId: string, ttlMs: number, options?: SightingOptions | null): Promise<boolean>;
    /** `firstSeen` of each id, sent together. */
    firstSeenMany(eventIds: string[], ttlMs: number, options?: SightingOptions | null): Promise<boolean[]>;
    /** The key of `eventId`'s sighting. */
    keys(eventId: string): DedupKeys;
}
