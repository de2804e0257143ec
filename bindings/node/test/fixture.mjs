// The package under test and a real server per test file (see server.mjs).
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { after, before } from 'node:test'
import { Server } from './server.mjs'

// The package as `require('redis-atomic')` loads it (package.json's main).
export const ra = createRequire(import.meta.url)('..')

/** Every declaration tsc emitted for the package (dist/*.d.ts), one text. */
export function declarations() {
  const dist = new URL('../dist/', import.meta.url)
  return readdirSync(dist).filter((f) => f.endsWith('.d.ts')).sort().map((f) => readFileSync(new URL(f, dist), 'utf8')).join('\n')
}

/** A server started before the file's tests and stopped after them, and a client on it. */
export function useServer(options = {}) {
  const ctx = {}
  before(async () => {
    ctx.server = await Server.start()
    ctx.client = await ra.Client.connect(ctx.server.url, options)
  })
  after(() => ctx.server?.stop())
  return ctx
}

/** `n` calls of `f(i)` started together; their results in order. */
export function concurrently(n, f) {
  return Promise.all(Array.from({ length: n }, (_, i) => f(i)))
}

/** The error `p` rejects with (fails if it resolves). */
export async function rejection(p) {
  try {
    await p
  } catch (e) {
    return e
  }
  throw new Error('expected a rejection, got a value')
}

/** The error `f()` throws synchronously (fails if it returns). */
export function thrown(f) {
  try {
    f()
  } catch (e) {
    return e
  }
  throw new Error('expected a throw, got a value')
}
