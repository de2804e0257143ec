// What every lease handle shares (LockGuard, Permit, Claim, Job): the token and fence that prove
// the lease, its length and local end, the ended flag, `extend` through the primitive's own
// fenced script, and the watchdog. A handle's end verb (release, complete, fail, ack, nack) is
// its own; it calls `end()` first, so a second end is a HandleEndedError and sends nothing.
import { badArgument, HandleEndedError, LeaseLostError, typeError } from './errors.js'
import type { Extended, Lost, WatchOptions } from './locks.js'

/** The verb whose success field a `Lost` also says `false` to (old code tests those fields). */
export type LostVerb = 'released' | 'extended' | 'acked' | 'stored' | 'nacked'

/** The one `Lost`, with the old discriminating field of the verb that answered it. */
export function lost(verb: LostVerb): Lost {
  switch (verb) {
    case 'released': return { lost: true, released: false }
    case 'extended': return { lost: true, extended: false }
    case 'acked': return { lost: true, acked: false }
    case 'stored': return { lost: true, stored: false }
    case 'nacked': return { lost: true, status: 'lost' }
  }
}

/** A caller's owner token, checked: 1..=256 bytes, no control characters. */
export function ownerToken(given: unknown): string {
  if (typeof given !== 'string') throw typeError('token must be a string')
  const len = Buffer.byteLength(given)
  if (len === 0 || len > 256) throw badArgument(`owner token must be 1..=256 bytes, got ${len}`)
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(given)) throw badArgument('owner token must not contain control characters')
  return given
}

/** A fence given back by a caller: a positive integer. */
export function fenceOf(fence: unknown): string {
  if (typeof fence !== 'number') throw typeError('fence must be a number')
  if (!Number.isSafeInteger(fence) || fence < 1) throw badArgument(`fence must be a positive integer, got ${fence}`)
  return String(fence)
}

/** A live lease: `fence` goes to every write it protects. */
export abstract class Lease {
  #ended = false
  #ttlMs: number
  #until: number
  #watch: { timer: NodeJS.Timeout, controller: AbortController } | undefined

  /** @internal `sent`: `performance.now()` from before the request that took the lease. */
  constructor(readonly token: string, readonly fence: number, ttlMs: number, sent: number) {
    this.#ttlMs = ttlMs
    this.#until = sent + ttlMs
  }

  /** Sets the lease to end `ttlMs` from the server's now, by token and fence. */
  protected abstract renew(ttlMs: number): Promise<Extended | Lost>
  /** What the lease is on, for messages. */
  protected abstract get subject(): string

  get ttlMs(): number { return this.#ttlMs }
  get expiresInMs(): number { return Math.max(0, this.#until - performance.now()) }
  get ended(): boolean { return this.#ended }

  /** Sets the lease to end `ttlMs` from the server's now (absolute, never added). */
  async extend(ttlMs: number): Promise<Extended | Lost> {
    this.#live('extend')
    if (this.#watch) throw badArgument('a watched lease is extended by its watchdog: unwatch() first')
    return this.#renew(ttlMs)
  }

  async #renew(ttlMs: number): Promise<Extended | Lost> {
    const sent = performance.now()
    const r = await this.renew(ttlMs)
    if ('extended' in r && r.extended) {
      this.#ttlMs = r.ttlMs
      this.#until = sent + r.ttlMs
    }
    return r
  }

  /** Ends the handle (its end verb calls this before sending): a second end throws. */
  protected end(verb: string): void {
    this.#live(verb)
    this.#ended = true
    this.#stop()
  }

  /** Renews the lease in the background until the end verb or `unwatch()`; the signal fires
   * (with a LeaseLostError) if the lease is lost. */
  watch(options?: WatchOptions | null): AbortSignal {
    this.#live('watch')
    if (options !== undefined && options !== null && typeof options !== 'object') throw typeError('options must be an object')
    if (this.#watch) throw badArgument('the lease is already watched')
    const renewFraction = options?.renewFraction ?? 1 / 3
    const margin = options?.marginFraction ?? 0.05
    if (typeof renewFraction !== 'number' || typeof margin !== 'number') throw typeError('watch fractions must be numbers')
    if (!(renewFraction > 0 && renewFraction < 1 && margin >= 0 && margin < renewFraction)) {
      throw badArgument(`watch fractions must satisfy 0 <= margin < renew < 1, got margin ${margin} renew ${renewFraction}`)
    }
    const controller = new AbortController()
    const every = Math.max(1, Math.floor(this.#ttlMs * renewFraction))
    const fail = (reason: 'not_held' | 'unconfirmed'): void => {
      this.#stop()
      controller.abort(new LeaseLostError(`the lease on ${this.subject} was lost (${reason})`, { reason, fence: this.fence }))
    }
    const timer = setInterval(() => {
      this.#renew(this.#ttlMs).then(
        (r) => { if (!('extended' in r && r.extended)) fail('not_held') },
        () => { if (this.expiresInMs <= this.#ttlMs * margin) fail('unconfirmed') },
      )
    }, every)
    timer.unref()
    this.#watch = { timer, controller }
    return controller.signal
  }

  /** Stops the renewals; the handle is held (unwatched) again. */
  async unwatch(): Promise<void> {
    this.#live('unwatch')
    this.#stop()
  }

  #stop(): void {
    if (this.#watch) clearInterval(this.#watch.timer)
    this.#watch = undefined
  }

  /** Throws the closed client's ClientError, which comes before a handle judges itself. */
  protected clientLive(): void {}

  #live(verb: string): void {
    this.clientLive()
    if (this.#ended) throw new HandleEndedError(`${verb}() after the handle ended (its end verb was already called)`, { nothingRan: true, retrySafe: true })
  }
}
