export interface HeaderInit {
    name: string;
    value: string | Buffer;
}
export interface Header {
    name: string;
    value: Buffer;
}
export interface ResponseInit {
    status: number;
    headers?: Record<string, string | Buffer> | HeaderInit[];
    body?: string | Buffer;
    reference?: string;
}
export interface StoredResponse {
    status: number;
    headers: Header[];
    body?: Buffer;
    reference?: string;
}
/** `init` encoded as the library stores it; BadArgumentError for what it cannot hold. */
export declare function encodeResponse(init: ResponseInit): Buffer;
/** What `encodeResponse` wrote (BadReplyError for anything else). */
export declare function decodeResponse(raw: Uint8Array): StoredResponse;
