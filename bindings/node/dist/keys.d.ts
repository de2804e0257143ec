/** Longest accepted tag or part, in bytes. */
export declare const MAX_TAG_LEN = 512;
/** `namespace` checked: non-empty, at most MAX_TAG_LEN bytes, no `{`, `}` or `:`. */
export declare function namespaceOf(namespace: unknown): string;
/** `<namespace>:<primitive>:v<schema>:{<tag>}` followed by `:<part>` for each part. */
export declare function key(namespace: string, primitive: string, schema: number, tag: string, parts?: readonly string[]): string;
/** 128 bits of SHA-256 in hex of `value`, after checking it is 1..=max bytes. */
export declare function digest(value: string, max: number, what: string): string;
/** The cluster hash slot of `key`: CRC16/XMODEM of its hash tag (or the whole key), mod 16384. */
export declare function slot(key: string | Uint8Array): number;
