import { type Client } from './client.js';
export interface FencedWritesOptions {
    namespace: string;
    retentionMs?: number;
}
export interface FencedKeys {
    fence: string;
}
export interface FencedWrite {
    op: 'set' | 'hset' | 'hdel' | 'sadd' | 'srem' | 'del' | 'expire';
    key: string;
    value?: string | Buffer;
    ttlMs?: number;
    fields?: Record<string, string | Buffer>;
    names?: string[];
    members?: (string | Buffer)[];
}
export interface Written {
    applied: true;
    fence: number;
    writes: number;
}
export interface Stale {
    applied: false;
    fence: number;
    writes: 0;
}
/** Fenced writes of one namespace. */
export declare class FencedWrites {
    #private;
    constructor(client: Client, options: FencedWritesOptions);
    /** Applies `writes` only if `fence` is at least the highest fence that wrote to `resource`. */
    write(resource: string, fence: number, writes: FencedWrite[]): Promise<Written | Stale>;
    /** The highest fence that wrote to `resource` (0 if none is remembered). */
    highest(resource: string): Promise<number>;
    /** A data key under `resource`'s tag: `<ns>:fenced:v1:{resource}:data:<part>`. */
    key(resource: string, part: string): string;
    /** The keys of `resource`'s fenced writes. */
    keys(resource: string): FencedKeys;
}
