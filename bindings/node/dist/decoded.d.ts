import * as generated from './scripts.js';
type Layer = typeof generated;
/** The generated layer, its `decode*` functions adopted; everything else as generated. */
export declare const s: Layer;
export {};
