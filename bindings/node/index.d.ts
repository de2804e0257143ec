// The package's declarations are emitted by tsc from ts/ into dist/; this re-export keeps the
// package root's index.d.ts (docs and tools name it) one with them.
export * from './dist/index.js'
