// The five-line example of docs/node.md, and the result types a TypeScript user works with;
// type-checked by `make test` (tsc --noEmit --strict), not run.
import {
  Client,
  RateLimiter,
  Quotas,
  Locks,
  OutcomeUnknownError,
  type Allowed,
  type Limited,
  type LimitSpec,
} from 'redis-atomic'

export async function quickstart(): Promise<void> {
  const client = await Client.connect('redis://127.0.0.1:6379', { timeoutMs: 500 })
  const limiter = new RateLimiter(client, {
    namespace: 'app',
    limits: [{ algorithm: 'gcra', limit: 10, periodMs: 1000 }],
  })
  const d = await limiter.consume('api-key-1')
  if (d.allowed) console.log('ok,', d.remaining, 'left')
  else console.log('retry in', d.retryAfterMs, 'ms') // narrowed: only a refusal has it
}

export function describe(d: Allowed | Limited): string {
  return d.allowed ? `allowed (${d.remaining} left)` : `limited for ${Math.ceil(d.retryAfterMs)} ms`
}

export const policy: LimitSpec[] = [
  { algorithm: 'token-bucket', limit: 100, periodMs: 60_000, burst: 20, name: 'minute' },
  { algorithm: 'fixed-window', limit: 10_000, periodMs: 86_400_000, name: 'day' },
]

export async function charge(quotas: Quotas, requestId: string): Promise<boolean> {
  try {
    const r = await quotas.add('credits', 1, { max: 100, ttlMs: 86_400_000, requestId })
    return r.applied
  } catch (e) {
    if (e instanceof OutcomeUnknownError && e.retrySafe) return charge(quotas, requestId)
    throw e
  }
}

// A lock's handle narrows on `acquired`; pass its fence to what it protects; an aborted wait
// may still have taken the lock (acquire again with the same token to find out).
export async function withLock<T>(
  locks: Locks,
  resource: string,
  work: (fence: number, lost: AbortSignal) => Promise<T>,
): Promise<T | null> {
  const lock = await locks.acquire(resource, 10_000, { waitMs: 2_000, signal: AbortSignal.timeout(5_000) })
  if (!lock.acquired) return null // held by someone else for lock.retryAfterMs more
  // Renewed in the background; `lost` aborts (with a LeaseLostError) if the lock is lost.
  const lost = lock.watch()
  try {
    return await work(lock.fence, lost)
  } finally {
    await lock.release() // stops the watchdog first; { released: false } if it was lost
  }
}
