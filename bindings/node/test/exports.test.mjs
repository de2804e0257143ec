// The package's surface: CommonJS and ESM agree, and the error classes keep their codes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as esm from '../index.js'
import { ra } from './fixture.mjs'

test('ESM named exports are exactly the CommonJS exports', () => {
  const named = Object.keys(esm).filter((k) => k !== 'default' && k !== 'module.exports').sort()
  assert.deepEqual(named, Object.keys(ra).sort())
})

test('every error class has a stable code and the right ancestry', () => {
  const codes = {
    NotSentError: 'NotSent', RejectedError: 'Rejected', OutcomeUnknownError: 'OutcomeUnknown',
    AbortedError: 'Aborted', WrongTypeError: 'WrongType', BadArgumentError: 'BadArgument',
    CostExceedsBurstError: 'CostExceedsBurst', BadReplyError: 'BadReply', CrossSlotError: 'CrossSlot',
    ServerError: 'ServerError', ConnectionError: 'ConnectionError', TlsError: 'TlsError',
    NotReplicatedError: 'NotReplicated', ClientError: 'ClientError',
  }
  for (const [name, code] of Object.entries(codes)) {
    const e = new ra[name]('m')
    assert.ok(e instanceof ra.RedisAtomicError && e instanceof Error, name)
    assert.equal(e.code, code)
    assert.equal(ra[name].code, code)
  }
  assert.ok(new ra.AbortedError('m') instanceof ra.OutcomeUnknownError)
  assert.equal(new ra.AbortedError('m').name, 'AbortError')
})
