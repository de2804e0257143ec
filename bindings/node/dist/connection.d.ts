import { Cluster, Redis } from 'ioredis';
/** The settings that keep ioredis from ever resending a command on its own. */
export declare const SAFE: {
    readonly autoResendUnfulfilledCommands: false;
    readonly maxRetriesPerRequest: 0;
    readonly enableOfflineQueue: false;
};
/** Where the certificates of a TLS connection come from. */
export interface TlsConfig {
    caFile?: string;
    ca?: string | Buffer;
    certFile?: string;
    keyFile?: string;
    cert?: string | Buffer;
    key?: string | Buffer;
}
/** What a connection is built from. */
export interface ConnectionSettings {
    timeoutMs: number;
    tls?: TlsConfig | undefined;
    cluster?: boolean | undefined;
}
/** Whether a user's instance is already at-most-once (then it is used as it is). */
export declare function isSafe(redis: Redis | Cluster): boolean;
/** A user's instance, or an at-most-once duplicate of it. */
export declare function adopt(redis: Redis | Cluster): {
    redis: Redis | Cluster;
    owned: boolean;
};
/** A new connection for `url` (an array: a cluster's seeds). */
export declare function open(url: string | string[], s: ConnectionSettings): Redis | Cluster;
/** Connects `redis` (built lazily) or fails with ConnectionError / TlsError; nothing ran. */
export declare function connect(redis: Redis | Cluster, timeoutMs: number, signal?: AbortSignal): Promise<void>;
