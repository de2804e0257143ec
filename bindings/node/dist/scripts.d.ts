/** A raw RESP value as a client hands it over: arrays, bulk strings (text or bytes), integers, nil. */
export type RawReply = null | number | bigint | string | Uint8Array | readonly RawReply[];
/** One script: what a runner sends (`EVALSHA sha1` with `body` on NOSCRIPT, or `FCALL functionName`). */
export interface ScriptDef {
    readonly name: string;
    readonly library: string;
    readonly sha1: string;
    readonly functionName: string;
    readonly body: string;
    readonly keys: readonly string[];
    readonly args: readonly string[];
    /** `no-writes`: runs by EVALSHA_RO / FCALL_RO. */
    readonly readOnly: boolean;
    /** Resending after an unknown outcome cannot repeat the effect. */
    readonly retrySafe: boolean;
    readonly batchable: boolean;
    /** A batchable script's batch entry point (several waiting decisions in one call). */
    readonly batch?: ScriptDef;
}
/** A script argument as sent. */
export type ScriptArg = string | number | Uint8Array;
/** What runs a script and hands back its raw reply (the ioredis runtime implements it). */
export interface ScriptRunner {
    run(def: ScriptDef, keys: string[], args: ScriptArg[]): Promise<unknown>;
}
/** A reply none of the script's declared shapes: error code `bad_reply`. */
export declare class BadReplyError extends Error {
    readonly script: string;
    readonly detail: string;
    readonly code: "bad_reply";
    constructor(script: string, detail: string);
}
/** The Function library of these scripts, as `FUNCTION LOAD` takes it (FCALL delivery). */
export declare const LIBRARY: {
    readonly name: string;
    readonly source: string;
};
/** `_batch`: several decisions of batchable scripts, in order, in one call. */
export declare const BATCH_DEFAULT: ScriptDef;
/** `fenced_write`: apply idempotent writes under one resource's hash tag only if the fence is at least the highest seen, and record it */
export declare const FENCED_WRITE: ScriptDef;
export interface FencedWriteKeys {
    readonly fence: string;
    readonly target: readonly string[];
}
export interface FencedWriteArgs {
    readonly fence: ScriptArg;
    readonly retentionMs: ScriptArg;
    readonly spec: readonly ScriptArg[];
}
export interface FencedWriteApplied {
    readonly outcome: 'applied';
    readonly fence: number;
    readonly writes: number;
}
export interface FencedWriteStale {
    readonly outcome: 'stale';
    readonly highest: number;
}
/** The reply of `fenced_write`. */
export type FencedWriteReply = FencedWriteApplied | FencedWriteStale;
/** Decodes a raw reply of `fenced_write`; a malformed one throws BadReplyError. */
export declare function decodeFencedWrite(raw: unknown): FencedWriteReply;
/** Runs `fenced_write` and decodes its reply. */
export declare function callFencedWrite(runner: ScriptRunner, keys: FencedWriteKeys, args: FencedWriteArgs): Promise<FencedWriteReply>;
/** `idem_begin`: claim an idempotency key for one execution, or say why not (in flight, replay, mismatch) */
export declare const IDEM_BEGIN: ScriptDef;
export interface IdemBeginKeys {
    readonly record: string;
}
export interface IdemBeginArgs {
    readonly token: ScriptArg;
    readonly fingerprint: ScriptArg;
    readonly ttlMs: ScriptArg;
    readonly resultTtlMs: ScriptArg;
}
export interface IdemBeginClaimed {
    readonly outcome: 'claimed';
    readonly fence: number;
    readonly ttlMs: number;
    readonly takeover: boolean;
}
export interface IdemBeginInProgress {
    readonly outcome: 'in_progress';
    readonly retryAfterMs: number;
}
export interface IdemBeginReplay {
    readonly outcome: 'replay';
    readonly outcomeValue: 'completed' | 'failed';
    readonly payload: Uint8Array;
}
export interface IdemBeginMismatch {
    readonly outcome: 'mismatch';
}
/** The reply of `idem_begin`. */
export type IdemBeginReply = IdemBeginClaimed | IdemBeginInProgress | IdemBeginReplay | IdemBeginMismatch;
/** Decodes a raw reply of `idem_begin`; a malformed one throws BadReplyError. */
export declare function decodeIdemBegin(raw: unknown): IdemBeginReply;
/** Runs `idem_begin` and decodes its reply. */
export declare function callIdemBegin(runner: ScriptRunner, keys: IdemBeginKeys, args: IdemBeginArgs): Promise<IdemBeginReply>;
/** `idem_complete`: store the result of a claimed execution, only for its token and fence */
export declare const IDEM_COMPLETE: ScriptDef;
export interface IdemCompleteKeys {
    readonly record: string;
}
export interface IdemCompleteArgs {
    readonly token: ScriptArg;
    readonly fence: ScriptArg;
    readonly outcome: ScriptArg;
    readonly payload: ScriptArg;
    readonly resultTtlMs: ScriptArg;
}
export interface IdemCompleteStored {
    readonly outcome: 'stored';
}
export interface IdemCompleteLost {
    readonly outcome: 'lost';
}
/** The reply of `idem_complete`. */
export type IdemCompleteReply = IdemCompleteStored | IdemCompleteLost;
/** Decodes a raw reply of `idem_complete`; a malformed one throws BadReplyError. */
export declare function decodeIdemComplete(raw: unknown): IdemCompleteReply;
/** Runs `idem_complete` and decodes its reply. */
export declare function callIdemComplete(runner: ScriptRunner, keys: IdemCompleteKeys, args: IdemCompleteArgs): Promise<IdemCompleteReply>;
/** `idem_extend`: extend a live claim's lease to ttl_ms from now, only for its token and fence */
export declare const IDEM_EXTEND: ScriptDef;
export interface IdemExtendKeys {
    readonly record: string;
}
export interface IdemExtendArgs {
    readonly token: ScriptArg;
    readonly fence: ScriptArg;
    readonly ttlMs: ScriptArg;
}
export interface IdemExtendExtended {
    readonly outcome: 'extended';
    readonly fence: number;
    readonly ttlMs: number;
}
export interface IdemExtendLost {
    readonly outcome: 'lost';
}
/** The reply of `idem_extend`. */
export type IdemExtendReply = IdemExtendExtended | IdemExtendLost;
/** Decodes a raw reply of `idem_extend`; a malformed one throws BadReplyError. */
export declare function decodeIdemExtend(raw: unknown): IdemExtendReply;
/** Runs `idem_extend` and decodes its reply. */
export declare function callIdemExtend(runner: ScriptRunner, keys: IdemExtendKeys, args: IdemExtendArgs): Promise<IdemExtendReply>;
/** `lock_acquire`: acquire a lease-style lock and issue a fencing token, or report who holds it */
export declare const LOCK_ACQUIRE: ScriptDef;
export interface LockAcquireKeys {
    readonly lock: string;
    readonly fence: string;
}
export interface LockAcquireArgs {
    readonly token: ScriptArg;
    readonly ttlMs: ScriptArg;
}
export interface LockAcquireAcquired {
    readonly outcome: 'acquired';
    readonly fence: number;
    readonly ttlMs: number;
}
export interface LockAcquireHeld {
    readonly outcome: 'held';
    readonly retryAfterMs: number;
}
/** The reply of `lock_acquire`. */
export type LockAcquireReply = LockAcquireAcquired | LockAcquireHeld;
/** Decodes a raw reply of `lock_acquire`; a malformed one throws BadReplyError. */
export declare function decodeLockAcquire(raw: unknown): LockAcquireReply;
/** Runs `lock_acquire` and decodes its reply. */
export declare function callLockAcquire(runner: ScriptRunner, keys: LockAcquireKeys, args: LockAcquireArgs): Promise<LockAcquireReply>;
/** `lock_extend`: set a held lock's remaining lease to ttl_ms from now, only for its owner token and fence */
export declare const LOCK_EXTEND: ScriptDef;
export interface LockExtendKeys {
    readonly lock: string;
}
export interface LockExtendArgs {
    readonly token: ScriptArg;
    readonly fence: ScriptArg;
    readonly ttlMs: ScriptArg;
}
export interface LockExtendExtended {
    readonly outcome: 'extended';
    readonly fence: number;
    readonly ttlMs: number;
}
export interface LockExtendLost {
    readonly outcome: 'lost';
}
/** The reply of `lock_extend`. */
export type LockExtendReply = LockExtendExtended | LockExtendLost;
/** Decodes a raw reply of `lock_extend`; a malformed one throws BadReplyError. */
export declare function decodeLockExtend(raw: unknown): LockExtendReply;
/** Runs `lock_extend` and decodes its reply. */
export declare function callLockExtend(runner: ScriptRunner, keys: LockExtendKeys, args: LockExtendArgs): Promise<LockExtendReply>;
/** `lock_inspect`: read a lock's state without changing it (runs on replicas) */
export declare const LOCK_INSPECT: ScriptDef;
export interface LockInspectKeys {
    readonly lock: string;
    readonly fence: string;
}
export type LockInspectArgs = Record<string, never>;
export interface LockInspectHeld {
    readonly outcome: 'held';
    readonly fence: number;
    readonly ttlMs: number;
}
export interface LockInspectFree {
    readonly outcome: 'free';
    readonly lastFence: number;
}
/** The reply of `lock_inspect`. */
export type LockInspectReply = LockInspectHeld | LockInspectFree;
/** Decodes a raw reply of `lock_inspect`; a malformed one throws BadReplyError. */
export declare function decodeLockInspect(raw: unknown): LockInspectReply;
/** Runs `lock_inspect` and decodes its reply. */
export declare function callLockInspect(runner: ScriptRunner, keys: LockInspectKeys, args: LockInspectArgs): Promise<LockInspectReply>;
/** `lock_release`: release a lock, only for its current owner token and fence */
export declare const LOCK_RELEASE: ScriptDef;
export interface LockReleaseKeys {
    readonly lock: string;
}
export interface LockReleaseArgs {
    readonly token: ScriptArg;
    readonly fence: ScriptArg;
}
export interface LockReleaseReleased {
    readonly outcome: 'released';
    readonly fence: number;
}
export interface LockReleaseLost {
    readonly outcome: 'lost';
}
/** The reply of `lock_release`. */
export type LockReleaseReply = LockReleaseReleased | LockReleaseLost;
/** Decodes a raw reply of `lock_release`; a malformed one throws BadReplyError. */
export declare function decodeLockRelease(raw: unknown): LockReleaseReply;
/** Runs `lock_release` and decodes its reply. */
export declare function callLockRelease(runner: ScriptRunner, keys: LockReleaseKeys, args: LockReleaseArgs): Promise<LockReleaseReply>;
/** `queue_ack`: complete a running job, only for the worker it is leased to and its current fence; keep a tombstone for keep_ms so enqueue stays idempotent */
export declare const QUEUE_ACK: ScriptDef;
export interface QueueAckKeys {
    readonly inflight: string;
    readonly meta: string;
    readonly payload: string;
    readonly errors: string;
    readonly done: string;
}
export interface QueueAckArgs {
    readonly jobId: ScriptArg;
    readonly token: ScriptArg;
    readonly fence: ScriptArg;
    readonly keepMs: ScriptArg;
}
export interface QueueAckAcked {
    readonly outcome: 'acked';
}
export interface QueueAckLost {
    readonly outcome: 'lost';
}
/** The reply of `queue_ack`. */
export type QueueAckReply = QueueAckAcked | QueueAckLost;
/** Decodes a raw reply of `queue_ack`; a malformed one throws BadReplyError. */
export declare function decodeQueueAck(raw: unknown): QueueAckReply;
/** Runs `queue_ack` and decodes its reply. */
export declare function callQueueAck(runner: ScriptRunner, keys: QueueAckKeys, args: QueueAckArgs): Promise<QueueAckReply>;
/** `queue_claim`: return expired leases, then lease up to max_jobs due jobs (due order) to a worker, each with a new fence */
export declare const QUEUE_CLAIM: ScriptDef;
export interface QueueClaimKeys {
    readonly due: string;
    readonly inflight: string;
    readonly dead: string;
    readonly meta: string;
    readonly payload: string;
    readonly errors: string;
}
export interface QueueClaimArgs {
    readonly worker: ScriptArg;
    readonly ttlMs: ScriptArg;
    readonly maxJobs: ScriptArg;
    readonly maxDeliveries: ScriptArg;
    readonly maxDead: ScriptArg;
    readonly keepDeadMs: ScriptArg;
}
export interface QueueClaimClaimed {
    readonly outcome: 'claimed';
    readonly nowMs: number;
    readonly count: number;
    readonly jobs: readonly QueueClaimJobsItem[];
}
export interface QueueClaimEmpty {
    readonly outcome: 'empty';
    readonly retryAfterMs: number;
}
export interface QueueClaimIdle {
    readonly outcome: 'idle';
}
export interface QueueClaimJobsItem {
    readonly id: string;
    readonly fence: number;
    readonly deliveries: number;
    readonly payload: Uint8Array;
}
/** The reply of `queue_claim`. */
export type QueueClaimReply = QueueClaimClaimed | QueueClaimEmpty | QueueClaimIdle;
/** Decodes a raw reply of `queue_claim`; a malformed one throws BadReplyError. */
export declare function decodeQueueClaim(raw: unknown): QueueClaimReply;
/** Runs `queue_claim` and decodes its reply. */
export declare function callQueueClaim(runner: ScriptRunner, keys: QueueClaimKeys, args: QueueClaimArgs): Promise<QueueClaimReply>;
/** `queue_claim_id`: queue_claim with a claim id: the leases are recorded, and a repeat of the id returns those still live instead of claiming again */
export declare const QUEUE_CLAIM_ID: ScriptDef;
export interface QueueClaimIdKeys {
    readonly due: string;
    readonly inflight: string;
    readonly dead: string;
    readonly meta: string;
    readonly payload: string;
    readonly errors: string;
    readonly claim: string;
}
export interface QueueClaimIdArgs {
    readonly worker: ScriptArg;
    readonly ttlMs: ScriptArg;
    readonly maxJobs: ScriptArg;
    readonly maxDeliveries: ScriptArg;
    readonly maxDead: ScriptArg;
    readonly keepDeadMs: ScriptArg;
    readonly requestTtlMs: ScriptArg;
}
export interface QueueClaimIdClaimed {
    readonly outcome: 'claimed';
    readonly nowMs: number;
    readonly replayed: boolean;
    readonly count: number;
    readonly jobs: readonly QueueClaimIdJobsItem[];
}
export interface QueueClaimIdEmpty {
    readonly outcome: 'empty';
    readonly retryAfterMs: number;
}
export interface QueueClaimIdIdle {
    readonly outcome: 'idle';
}
export interface QueueClaimIdJobsItem {
    readonly id: string;
    readonly fence: number;
    readonly deliveries: number;
    readonly payload: Uint8Array;
    readonly ttlMs: number;
}
/** The reply of `queue_claim_id`. */
export type QueueClaimIdReply = QueueClaimIdClaimed | QueueClaimIdEmpty | QueueClaimIdIdle;
/** Decodes a raw reply of `queue_claim_id`; a malformed one throws BadReplyError. */
export declare function decodeQueueClaimId(raw: unknown): QueueClaimIdReply;
/** Runs `queue_claim_id` and decodes its reply. */
export declare function callQueueClaimId(runner: ScriptRunner, keys: QueueClaimIdKeys, args: QueueClaimIdArgs): Promise<QueueClaimIdReply>;
/** `queue_dead_list`: list at most count dead letters from position start (oldest first), with deliveries and last error */
export declare const QUEUE_DEAD_LIST: ScriptDef;
export interface QueueDeadListKeys {
    readonly dead: string;
    readonly meta: string;
    readonly errors: string;
}
export interface QueueDeadListArgs {
    readonly start: ScriptArg;
    readonly count: ScriptArg;
}
export interface QueueDeadListListed {
    readonly outcome: 'listed';
    readonly total: number;
    readonly letters: readonly QueueDeadListLettersItem[];
}
export interface QueueDeadListLettersItem {
    readonly id: string;
    readonly deadAtMs: number;
    readonly deliveries: number;
    readonly error: string;
}
/** The reply of `queue_dead_list`. */
export type QueueDeadListReply = QueueDeadListListed;
/** Decodes a raw reply of `queue_dead_list`; a malformed one throws BadReplyError. */
export declare function decodeQueueDeadList(raw: unknown): QueueDeadListReply;
/** Runs `queue_dead_list` and decodes its reply. */
export declare function callQueueDeadList(runner: ScriptRunner, keys: QueueDeadListKeys, args: QueueDeadListArgs): Promise<QueueDeadListReply>;
/** `queue_dead_purge`: delete at most limit dead letters that died older_than_ms or longer ago (oldest first), each with its record, payload and last error */
export declare const QUEUE_DEAD_PURGE: ScriptDef;
export interface QueueDeadPurgeKeys {
    readonly dead: string;
    readonly meta: string;
    readonly payload: string;
    readonly errors: string;
}
export interface QueueDeadPurgeArgs {
    readonly olderThanMs: ScriptArg;
    readonly limit: ScriptArg;
}
export interface QueueDeadPurgePurged {
    readonly outcome: 'purged';
    readonly purged: number;
    readonly remaining: number;
}
/** The reply of `queue_dead_purge`. */
export type QueueDeadPurgeReply = QueueDeadPurgePurged;
/** Decodes a raw reply of `queue_dead_purge`; a malformed one throws BadReplyError. */
export declare function decodeQueueDeadPurge(raw: unknown): QueueDeadPurgeReply;
/** Runs `queue_dead_purge` and decodes its reply. */
export declare function callQueueDeadPurge(runner: ScriptRunner, keys: QueueDeadPurgeKeys, args: QueueDeadPurgeArgs): Promise<QueueDeadPurgeReply>;
/** `queue_dead_requeue`: move one dead letter back to due after delay_ms with its delivery count reset */
export declare const QUEUE_DEAD_REQUEUE: ScriptDef;
export interface QueueDeadRequeueKeys {
    readonly dead: string;
    readonly due: string;
    readonly meta: string;
    readonly errors: string;
}
export interface QueueDeadRequeueArgs {
    readonly jobId: ScriptArg;
    readonly delayMs: ScriptArg;
}
export interface QueueDeadRequeueRequeued {
    readonly outcome: 'requeued';
}
export interface QueueDeadRequeueNotDead {
    readonly outcome: 'not_dead';
}
/** The reply of `queue_dead_requeue`. */
export type QueueDeadRequeueReply = QueueDeadRequeueRequeued | QueueDeadRequeueNotDead;
/** Decodes a raw reply of `queue_dead_requeue`; a malformed one throws BadReplyError. */
export declare function decodeQueueDeadRequeue(raw: unknown): QueueDeadRequeueReply;
/** Runs `queue_dead_requeue` and decodes its reply. */
export declare function callQueueDeadRequeue(runner: ScriptRunner, keys: QueueDeadRequeueKeys, args: QueueDeadRequeueArgs): Promise<QueueDeadRequeueReply>;
/** `queue_enqueue`: add a job once per job id, due at at_ms when given (ordered by it even if past), else now + delay_ms on the server's clock */
export declare const QUEUE_ENQUEUE: ScriptDef;
export interface QueueEnqueueKeys {
    readonly due: string;
    readonly meta: string;
    readonly payload: string;
}
export interface QueueEnqueueArgs {
    readonly jobId: ScriptArg;
    readonly payload: ScriptArg;
    readonly delayMs: ScriptArg;
    readonly atMs: ScriptArg;
}
export interface QueueEnqueueEnqueued {
    readonly outcome: 'enqueued';
    readonly dueInMs: number;
}
export interface QueueEnqueueExists {
    readonly outcome: 'exists';
    readonly status: 'queued' | 'running' | 'dead' | 'acked';
}
/** The reply of `queue_enqueue`. */
export type QueueEnqueueReply = QueueEnqueueEnqueued | QueueEnqueueExists;
/** Decodes a raw reply of `queue_enqueue`; a malformed one throws BadReplyError. */
export declare function decodeQueueEnqueue(raw: unknown): QueueEnqueueReply;
/** Runs `queue_enqueue` and decodes its reply. */
export declare function callQueueEnqueue(runner: ScriptRunner, keys: QueueEnqueueKeys, args: QueueEnqueueArgs): Promise<QueueEnqueueReply>;
/** `queue_extend`: set a running job's lease to end ttl_ms from now, only for the worker it is leased to and its current fence */
export declare const QUEUE_EXTEND: ScriptDef;
export interface QueueExtendKeys {
    readonly inflight: string;
    readonly meta: string;
}
export interface QueueExtendArgs {
    readonly jobId: ScriptArg;
    readonly token: ScriptArg;
    readonly fence: ScriptArg;
    readonly ttlMs: ScriptArg;
}
export interface QueueExtendExtended {
    readonly outcome: 'extended';
    readonly fence: number;
    readonly ttlMs: number;
}
export interface QueueExtendLost {
    readonly outcome: 'lost';
}
/** The reply of `queue_extend`. */
export type QueueExtendReply = QueueExtendExtended | QueueExtendLost;
/** Decodes a raw reply of `queue_extend`; a malformed one throws BadReplyError. */
export declare function decodeQueueExtend(raw: unknown): QueueExtendReply;
/** Runs `queue_extend` and decodes its reply. */
export declare function callQueueExtend(runner: ScriptRunner, keys: QueueExtendKeys, args: QueueExtendArgs): Promise<QueueExtendReply>;
/** `queue_inspect`: one job's state, read without changing it */
export declare const QUEUE_INSPECT: ScriptDef;
export interface QueueInspectKeys {
    readonly due: string;
    readonly inflight: string;
    readonly meta: string;
    readonly errors: string;
}
export interface QueueInspectArgs {
    readonly jobId: ScriptArg;
}
export interface QueueInspectQueued {
    readonly outcome: 'queued';
    readonly dueInMs: number;
    readonly deliveries: number;
    readonly lastFence: number;
}
export interface QueueInspectRunning {
    readonly outcome: 'running';
    readonly fence: number;
    readonly deliveries: number;
    readonly ttlMs: number;
    readonly worker: string;
}
export interface QueueInspectDead {
    readonly outcome: 'dead';
    readonly deliveries: number;
    readonly error: string;
}
export interface QueueInspectAcked {
    readonly outcome: 'acked';
    readonly fence: number;
}
export interface QueueInspectUnknown {
    readonly outcome: 'unknown';
}
/** The reply of `queue_inspect`. */
export type QueueInspectReply = QueueInspectQueued | QueueInspectRunning | QueueInspectDead | QueueInspectAcked | QueueInspectUnknown;
/** Decodes a raw reply of `queue_inspect`; a malformed one throws BadReplyError. */
export declare function decodeQueueInspect(raw: unknown): QueueInspectReply;
/** Runs `queue_inspect` and decodes its reply. */
export declare function callQueueInspect(runner: ScriptRunner, keys: QueueInspectKeys, args: QueueInspectArgs): Promise<QueueInspectReply>;
/** `queue_nack`: give a running job back (its worker and current fence only): due again after retry_after_ms, or dead once delivered max_deliveries times */
export declare const QUEUE_NACK: ScriptDef;
export interface QueueNackKeys {
    readonly inflight: string;
    readonly due: string;
    readonly dead: string;
    readonly meta: string;
    readonly payload: string;
    readonly errors: string;
}
export interface QueueNackArgs {
    readonly jobId: ScriptArg;
    readonly token: ScriptArg;
    readonly fence: ScriptArg;
    readonly retryAfterMs: ScriptArg;
    readonly maxDeliveries: ScriptArg;
    readonly error: ScriptArg;
    readonly maxDead: ScriptArg;
    readonly keepDeadMs: ScriptArg;
}
export interface QueueNackRetrying {
    readonly outcome: 'retrying';
    readonly retryAfterMs: number;
}
export interface QueueNackDead {
    readonly outcome: 'dead';
}
export interface QueueNackLost {
    readonly outcome: 'lost';
}
/** The reply of `queue_nack`. */
export type QueueNackReply = QueueNackRetrying | QueueNackDead | QueueNackLost;
/** Decodes a raw reply of `queue_nack`; a malformed one throws BadReplyError. */
export declare function decodeQueueNack(raw: unknown): QueueNackReply;
/** Runs `queue_nack` and decodes its reply. */
export declare function callQueueNack(runner: ScriptRunner, keys: QueueNackKeys, args: QueueNackArgs): Promise<QueueNackReply>;
/** `queue_reap`: return at most limit expired leases to due (or to the dead letters after max_deliveries) */
export declare const QUEUE_REAP: ScriptDef;
export interface QueueReapKeys {
    readonly inflight: string;
    readonly due: string;
    readonly dead: string;
    readonly meta: string;
    readonly payload: string;
    readonly errors: string;
}
export interface QueueReapArgs {
    readonly limit: ScriptArg;
    readonly maxDeliveries: ScriptArg;
    readonly maxDead: ScriptArg;
    readonly keepDeadMs: ScriptArg;
}
export interface QueueReapReaped {
    readonly outcome: 'reaped';
    readonly requeued: number;
    readonly dead: number;
}
/** The reply of `queue_reap`. */
export type QueueReapReply = QueueReapReaped;
/** Decodes a raw reply of `queue_reap`; a malformed one throws BadReplyError. */
export declare function decodeQueueReap(raw: unknown): QueueReapReply;
/** Runs `queue_reap` and decodes its reply. */
export declare function callQueueReap(runner: ScriptRunner, keys: QueueReapKeys, args: QueueReapArgs): Promise<QueueReapReply>;
/** `queue_stats`: count a queue's jobs by state (due now, scheduled later, in flight, expired leases, dead, acked tombstones) */
export declare const QUEUE_STATS: ScriptDef;
export interface QueueStatsKeys {
    readonly due: string;
    readonly inflight: string;
    readonly dead: string;
    readonly done: string;
}
export type QueueStatsArgs = Record<string, never>;
export interface QueueStatsStats {
    readonly outcome: 'stats';
    readonly ready: number;
    readonly scheduled: number;
    readonly running: number;
    readonly expired: number;
    readonly dead: number;
    readonly acked: number;
}
/** The reply of `queue_stats`. */
export type QueueStatsReply = QueueStatsStats;
/** Decodes a raw reply of `queue_stats`; a malformed one throws BadReplyError. */
export declare function decodeQueueStats(raw: unknown): QueueStatsReply;
/** Runs `queue_stats` and decodes its reply. */
export declare function callQueueStats(runner: ScriptRunner, keys: QueueStatsKeys, args: QueueStatsArgs): Promise<QueueStatsReply>;
/** `quota_add`: add delta to a counter only if it stays within [min, max] (or clamped to them); the first write sets its TTL once */
export declare const QUOTA_ADD: ScriptDef;
export interface QuotaAddKeys {
    readonly counter: string;
}
export interface QuotaAddArgs {
    readonly delta: ScriptArg;
    readonly min: ScriptArg;
    readonly max: ScriptArg;
    readonly mode: ScriptArg;
    readonly ttlMs: ScriptArg;
}
export interface QuotaAddApplied {
    readonly outcome: 'applied';
    readonly value: number;
}
export interface QuotaAddRefused {
    readonly outcome: 'refused';
    readonly value: number;
}
/** The reply of `quota_add`. */
export type QuotaAddReply = QuotaAddApplied | QuotaAddRefused;
/** Decodes a raw reply of `quota_add`; a malformed one throws BadReplyError. */
export declare function decodeQuotaAdd(raw: unknown): QuotaAddReply;
/** Runs `quota_add` and decodes its reply. */
export declare function callQuotaAdd(runner: ScriptRunner, keys: QuotaAddKeys, args: QuotaAddArgs): Promise<QuotaAddReply>;
/** `quota_add_id`: quota_add with a request id: the first answer is recorded, and a repeat of the id returns it without adding again */
export declare const QUOTA_ADD_ID: ScriptDef;
export interface QuotaAddIdKeys {
    readonly counter: string;
    readonly request: string;
}
export interface QuotaAddIdArgs {
    readonly delta: ScriptArg;
    readonly min: ScriptArg;
    readonly max: ScriptArg;
    readonly mode: ScriptArg;
    readonly ttlMs: ScriptArg;
    readonly requestTtlMs: ScriptArg;
}
export interface QuotaAddIdApplied {
    readonly outcome: 'applied';
    readonly value: number;
}
export interface QuotaAddIdRefused {
    readonly outcome: 'refused';
    readonly value: number;
}
/** The reply of `quota_add_id`. */
export type QuotaAddIdReply = QuotaAddIdApplied | QuotaAddIdRefused;
/** Decodes a raw reply of `quota_add_id`; a malformed one throws BadReplyError. */
export declare function decodeQuotaAddId(raw: unknown): QuotaAddIdReply;
/** Runs `quota_add_id` and decodes its reply. */
export declare function callQuotaAddId(runner: ScriptRunner, keys: QuotaAddIdKeys, args: QuotaAddIdArgs): Promise<QuotaAddIdReply>;
/** `quota_max`: raise a value to candidate unless it already holds at least that (monotonic max) */
export declare const QUOTA_MAX: ScriptDef;
export interface QuotaMaxKeys {
    readonly value: string;
}
export interface QuotaMaxArgs {
    readonly candidate: ScriptArg;
}
export interface QuotaMaxRaised {
    readonly outcome: 'raised';
    readonly value: number;
}
export interface QuotaMaxKept {
    readonly outcome: 'kept';
    readonly value: number;
}
/** The reply of `quota_max`. */
export type QuotaMaxReply = QuotaMaxRaised | QuotaMaxKept;
/** Decodes a raw reply of `quota_max`; a malformed one throws BadReplyError. */
export declare function decodeQuotaMax(raw: unknown): QuotaMaxReply;
/** Runs `quota_max` and decodes its reply. */
export declare function callQuotaMax(runner: ScriptRunner, keys: QuotaMaxKeys, args: QuotaMaxArgs): Promise<QuotaMaxReply>;
/** `rl_anchored_window`: consume cost units of one fixed window anchored at its first request, all or nothing, without reading the clock */
export declare const RL_ANCHORED_WINDOW: ScriptDef;
export interface RlAnchoredWindowKeys {
    readonly state: string;
}
export interface RlAnchoredWindowArgs {
    readonly cost: ScriptArg;
    readonly limit: ScriptArg;
    readonly periodMs: ScriptArg;
}
export interface RlAnchoredWindowAllowed {
    readonly outcome: 'allowed';
    readonly remaining: number;
    readonly resetUs: number;
}
export interface RlAnchoredWindowLimited {
    readonly outcome: 'limited';
    readonly retryUs: number;
    readonly resetUs: number;
    readonly remaining: number;
}
/** The reply of `rl_anchored_window`. */
export type RlAnchoredWindowReply = RlAnchoredWindowAllowed | RlAnchoredWindowLimited;
/** Decodes a raw reply of `rl_anchored_window`; a malformed one throws BadReplyError. */
export declare function decodeRlAnchoredWindow(raw: unknown): RlAnchoredWindowReply;
/** Runs `rl_anchored_window` and decodes its reply. */
export declare function callRlAnchoredWindow(runner: ScriptRunner, keys: RlAnchoredWindowKeys, args: RlAnchoredWindowArgs): Promise<RlAnchoredWindowReply>;
/** `rl_fixed_window`: consume cost units of one fixed-window limit on server time, all or nothing */
export declare const RL_FIXED_WINDOW: ScriptDef;
export interface RlFixedWindowKeys {
    readonly state: string;
}
export interface RlFixedWindowArgs {
    readonly cost: ScriptArg;
    readonly limit: ScriptArg;
    readonly periodUs: ScriptArg;
    readonly burst: ScriptArg;
    readonly testNowUs: ScriptArg;
}
export interface RlFixedWindowAllowed {
    readonly outcome: 'allowed';
    readonly remaining: number;
    readonly resetUs: number;
}
export interface RlFixedWindowLimited {
    readonly outcome: 'limited';
    readonly retryUs: number;
    readonly resetUs: number;
    readonly remaining: number;
}
/** The reply of `rl_fixed_window`. */
export type RlFixedWindowReply = RlFixedWindowAllowed | RlFixedWindowLimited;
/** Decodes a raw reply of `rl_fixed_window`; a malformed one throws BadReplyError. */
export declare function decodeRlFixedWindow(raw: unknown): RlFixedWindowReply;
/** Runs `rl_fixed_window` and decodes its reply. */
export declare function callRlFixedWindow(runner: ScriptRunner, keys: RlFixedWindowKeys, args: RlFixedWindowArgs): Promise<RlFixedWindowReply>;
/** `rl_gcra`: consume cost units of one GCRA limit on server time, all or nothing */
export declare const RL_GCRA: ScriptDef;
export interface RlGcraKeys {
    readonly state: string;
}
export interface RlGcraArgs {
    readonly cost: ScriptArg;
    readonly limit: ScriptArg;
    readonly periodUs: ScriptArg;
    readonly burst: ScriptArg;
    readonly testNowUs: ScriptArg;
}
export interface RlGcraAllowed {
    readonly outcome: 'allowed';
    readonly remaining: number;
    readonly resetUs: number;
}
export interface RlGcraLimited {
    readonly outcome: 'limited';
    readonly retryUs: number;
    readonly resetUs: number;
    readonly remaining: number;
}
/** The reply of `rl_gcra`. */
export type RlGcraReply = RlGcraAllowed | RlGcraLimited;
/** Decodes a raw reply of `rl_gcra`; a malformed one throws BadReplyError. */
export declare function decodeRlGcra(raw: unknown): RlGcraReply;
/** Runs `rl_gcra` and decodes its reply. */
export declare function callRlGcra(runner: ScriptRunner, keys: RlGcraKeys, args: RlGcraArgs): Promise<RlGcraReply>;
/** `rl_policy`: consume cost units of every limit of a policy (any algorithms), or each limit its own hits, all or nothing */
export declare const RL_POLICY: ScriptDef;
export interface RlPolicyKeys {
    readonly request: string;
    readonly limit: readonly string[];
}
export interface RlPolicyArgs {
    readonly cost: ScriptArg;
    readonly requestId: ScriptArg;
    readonly requestTtlUs: ScriptArg;
    readonly testNowUs: ScriptArg;
    readonly spec: readonly ScriptArg[];
}
export interface RlPolicyAllowed {
    readonly outcome: 'allowed';
    readonly remaining: number;
    readonly resetUs: number;
    readonly n: number;
    readonly limits: readonly RlPolicyLimitsItem[];
}
export interface RlPolicyLimited {
    readonly outcome: 'limited';
    readonly retryUs: number;
    readonly resetUs: number;
    readonly n: number;
    readonly limits: readonly RlPolicyLimitsItem[];
}
export interface RlPolicyReplayed {
    readonly outcome: 'replayed';
    readonly remaining: number;
    readonly resetUs: number;
    readonly n: number;
    readonly limits: readonly RlPolicyLimitsItem[];
}
export interface RlPolicyLimitsItem {
    readonly remaining: number;
    readonly resetUs: number;
    readonly retryUs: number;
}
/** The reply of `rl_policy`. */
export type RlPolicyReply = RlPolicyAllowed | RlPolicyLimited | RlPolicyReplayed;
/** Decodes a raw reply of `rl_policy`; a malformed one throws BadReplyError. */
export declare function decodeRlPolicy(raw: unknown): RlPolicyReply;
/** Runs `rl_policy` and decodes its reply. */
export declare function callRlPolicy(runner: ScriptRunner, keys: RlPolicyKeys, args: RlPolicyArgs): Promise<RlPolicyReply>;
/** `rl_sliding_log`: consume cost units of one sliding-log limit on server time, all or nothing */
export declare const RL_SLIDING_LOG: ScriptDef;
export interface RlSlidingLogKeys {
    readonly state: string;
}
export interface RlSlidingLogArgs {
    readonly cost: ScriptArg;
    readonly limit: ScriptArg;
    readonly periodUs: ScriptArg;
    readonly burst: ScriptArg;
    readonly testNowUs: ScriptArg;
}
export interface RlSlidingLogAllowed {
    readonly outcome: 'allowed';
    readonly remaining: number;
    readonly resetUs: number;
}
export interface RlSlidingLogLimited {
    readonly outcome: 'limited';
    readonly retryUs: number;
    readonly resetUs: number;
    readonly remaining: number;
}
/** The reply of `rl_sliding_log`. */
export type RlSlidingLogReply = RlSlidingLogAllowed | RlSlidingLogLimited;
/** Decodes a raw reply of `rl_sliding_log`; a malformed one throws BadReplyError. */
export declare function decodeRlSlidingLog(raw: unknown): RlSlidingLogReply;
/** Runs `rl_sliding_log` and decodes its reply. */
export declare function callRlSlidingLog(runner: ScriptRunner, keys: RlSlidingLogKeys, args: RlSlidingLogArgs): Promise<RlSlidingLogReply>;
/** `rl_sliding_window`: consume cost units of one sliding-window-counter limit on server time, all or nothing */
export declare const RL_SLIDING_WINDOW: ScriptDef;
export interface RlSlidingWindowKeys {
    readonly state: string;
}
export interface RlSlidingWindowArgs {
    readonly cost: ScriptArg;
    readonly limit: ScriptArg;
    readonly periodUs: ScriptArg;
    readonly burst: ScriptArg;
    readonly testNowUs: ScriptArg;
}
export interface RlSlidingWindowAllowed {
    readonly outcome: 'allowed';
    readonly remaining: number;
    readonly resetUs: number;
}
export interface RlSlidingWindowLimited {
    readonly outcome: 'limited';
    readonly retryUs: number;
    readonly resetUs: number;
    readonly remaining: number;
}
/** The reply of `rl_sliding_window`. */
export type RlSlidingWindowReply = RlSlidingWindowAllowed | RlSlidingWindowLimited;
/** Decodes a raw reply of `rl_sliding_window`; a malformed one throws BadReplyError. */
export declare function decodeRlSlidingWindow(raw: unknown): RlSlidingWindowReply;
/** Runs `rl_sliding_window` and decodes its reply. */
export declare function callRlSlidingWindow(runner: ScriptRunner, keys: RlSlidingWindowKeys, args: RlSlidingWindowArgs): Promise<RlSlidingWindowReply>;
/** `rl_token_bucket`: consume cost units of one token-bucket limit on server time, all or nothing */
export declare const RL_TOKEN_BUCKET: ScriptDef;
export interface RlTokenBucketKeys {
    readonly state: string;
}
export interface RlTokenBucketArgs {
    readonly cost: ScriptArg;
    readonly limit: ScriptArg;
    readonly periodUs: ScriptArg;
    readonly burst: ScriptArg;
    readonly testNowUs: ScriptArg;
}
export interface RlTokenBucketAllowed {
    readonly outcome: 'allowed';
    readonly remaining: number;
    readonly resetUs: number;
}
export interface RlTokenBucketLimited {
    readonly outcome: 'limited';
    readonly retryUs: number;
    readonly resetUs: number;
    readonly remaining: number;
}
/** The reply of `rl_token_bucket`. */
export type RlTokenBucketReply = RlTokenBucketAllowed | RlTokenBucketLimited;
/** Decodes a raw reply of `rl_token_bucket`; a malformed one throws BadReplyError. */
export declare function decodeRlTokenBucket(raw: unknown): RlTokenBucketReply;
/** Runs `rl_token_bucket` and decodes its reply. */
export declare function callRlTokenBucket(runner: ScriptRunner, keys: RlTokenBucketKeys, args: RlTokenBucketArgs): Promise<RlTokenBucketReply>;
/** `sem_acquire`: take one of `capacity` permits for a holder with a lease and a fence, reclaiming expired permits first */
export declare const SEM_ACQUIRE: ScriptDef;
export interface SemAcquireKeys {
    readonly permits: string;
    readonly holders: string;
    readonly fence: string;
}
export interface SemAcquireArgs {
    readonly holder: ScriptArg;
    readonly capacity: ScriptArg;
    readonly ttlMs: ScriptArg;
}
export interface SemAcquireAcquired {
    readonly outcome: 'acquired';
    readonly fence: number;
    readonly ttlMs: number;
}
export interface SemAcquireFull {
    readonly outcome: 'full';
    readonly retryAfterMs: number;
}
/** The reply of `sem_acquire`. */
export type SemAcquireReply = SemAcquireAcquired | SemAcquireFull;
/** Decodes a raw reply of `sem_acquire`; a malformed one throws BadReplyError. */
export declare function decodeSemAcquire(raw: unknown): SemAcquireReply;
/** Runs `sem_acquire` and decodes its reply. */
export declare function callSemAcquire(runner: ScriptRunner, keys: SemAcquireKeys, args: SemAcquireArgs): Promise<SemAcquireReply>;
/** `sem_extend`: set a held permit's lease to end ttl_ms from now, only for its holder and fence */
export declare const SEM_EXTEND: ScriptDef;
export interface SemExtendKeys {
    readonly permits: string;
    readonly holders: string;
}
export interface SemExtendArgs {
    readonly holder: ScriptArg;
    readonly fence: ScriptArg;
    readonly ttlMs: ScriptArg;
}
export interface SemExtendExtended {
    readonly outcome: 'extended';
    readonly fence: number;
    readonly ttlMs: number;
}
export interface SemExtendLost {
    readonly outcome: 'lost';
}
/** The reply of `sem_extend`. */
export type SemExtendReply = SemExtendExtended | SemExtendLost;
/** Decodes a raw reply of `sem_extend`; a malformed one throws BadReplyError. */
export declare function decodeSemExtend(raw: unknown): SemExtendReply;
/** Runs `sem_extend` and decodes its reply. */
export declare function callSemExtend(runner: ScriptRunner, keys: SemExtendKeys, args: SemExtendArgs): Promise<SemExtendReply>;
/** `sem_inspect`: count a semaphore's live permits without changing anything (runs on replicas) */
export declare const SEM_INSPECT: ScriptDef;
export interface SemInspectKeys {
    readonly permits: string;
    readonly fence: string;
}
export type SemInspectArgs = Record<string, never>;
export interface SemInspectPermits {
    readonly outcome: 'permits';
    readonly live: number;
    readonly nextExpiryMs: number;
    readonly lastFence: number;
}
/** The reply of `sem_inspect`. */
export type SemInspectReply = SemInspectPermits;
/** Decodes a raw reply of `sem_inspect`; a malformed one throws BadReplyError. */
export declare function decodeSemInspect(raw: unknown): SemInspectReply;
/** Runs `sem_inspect` and decodes its reply. */
export declare function callSemInspect(runner: ScriptRunner, keys: SemInspectKeys, args: SemInspectArgs): Promise<SemInspectReply>;
/** `sem_release`: give a permit back, only for its holder and fence */
export declare const SEM_RELEASE: ScriptDef;
export interface SemReleaseKeys {
    readonly permits: string;
    readonly holders: string;
}
export interface SemReleaseArgs {
    readonly holder: ScriptArg;
    readonly fence: ScriptArg;
}
export interface SemReleaseReleased {
    readonly outcome: 'released';
    readonly fence: number;
}
export interface SemReleaseLost {
    readonly outcome: 'lost';
}
/** The reply of `sem_release`. */
export type SemReleaseReply = SemReleaseReleased | SemReleaseLost;
/** Decodes a raw reply of `sem_release`; a malformed one throws BadReplyError. */
export declare function decodeSemRelease(raw: unknown): SemReleaseReply;
/** Runs `sem_release` and decodes its reply. */
export declare function callSemRelease(runner: ScriptRunner, keys: SemReleaseKeys, args: SemReleaseArgs): Promise<SemReleaseReply>;
/** Every script's decoder, by script name. */
export declare const DECODERS: {
    readonly [script: string]: (raw: unknown) => {
        readonly outcome: string;
    };
};
