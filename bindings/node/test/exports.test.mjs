// The package's surface: CommonJS and ESM agree, and the error classes keep their codes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as esm from '../index.mjs'
import { ra } from './fixture.mjs'

test('ESM named exports are exactly the CommonJS exports', () => {
  const named = Object.keys(esm).filter((k) => k !== 'default' && k !== 'module.exports').sort()
  assert.deepEqual(named, Object.keys(ra).sort())
})

test('every error class has a stable code and the right ancestry', () => {
  const codes = {
    NotSentError: 'not_sent', RejectedError: 'rejected', OutcomeUnknownError: 'outcome_unknown',
    AbortedError: 'aborted', WrongTypeError: 'wrong_type', BadArgumentError: 'bad_argument',
    CostExceedsBurstError: 'cost_exceeds_burst', BadReplyError: 'bad_reply', CrossSlotError: 'cross_slot',
    ServerError: 'server_error', ConnectionError: 'connection', TlsError: 'tls',
    NotReplicatedError: 'not_replicated', ClientError: 'client', HandleEndedError: 'handle_ended',
    LeaseLostError: 'lease_lost',
  }
  for (const [name, code] of Object.entries(codes)) {
    const e = new ra[name]('m')
    assert.ok(e instanceof ra.RedisAtomicError && e instanceof Error, name)
    assert.equal(e.code, code)
    assert.equal(ra[name].code, code)
  }
  assert.ok(new ra.AbortedError('m') instanceof ra.OutcomeUnknownError)
  assert.ok(new ra.HandleEndedError('m') instanceof ra.ClientError)
  assert.ok(!(new ra.HandleEndedError('m') instanceof ra.BadArgumentError))
  assert.equal(Object.getPrototypeOf(ra.CostExceedsBurstError), ra.RedisAtomicError)
  assert.equal(new ra.AbortedError('m').name, 'AbortError')
})
