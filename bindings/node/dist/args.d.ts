/** A duration in whole ms within `min..=max`: TypeError for a non-number, BadArgumentError else. */
export declare function msOf(what: string, ms: unknown, max: number, min?: number): number;
/** A string (as UTF-8) or a Buffer, as bytes. */
export declare function bytes(what: string, v: unknown): Buffer;
