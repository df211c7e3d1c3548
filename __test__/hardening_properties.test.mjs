// Seeded property tests of both plugins against hostile parameters (issue 8):
// every callback returns a real Promise, never throws synchronously, never
// rejects (except ReflectAndRetryToolPlugin's rethrow of the very error it
// was given, past its limit), and resolves to undefined or a plain object;
// and any two distinct JavaScript strings (lone surrogates, NULs) are
// distinct keys in both plugins.
//
// Replay a failure with its seed: PROPERTY_SEED=<seed> node --test __test__/hardening_properties.test.mjs
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { types } from 'node:util'
import fc from 'fast-check'
import { ReflectAndRetryToolPlugin, TracingPlugin } from '../index.js'

const SEED = process.env.PROPERTY_SEED !== undefined ? Number(process.env.PROPERTY_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0
console.log(`hardening properties: seed ${SEED} (replay with PROPERTY_SEED=${SEED})`)
const RUNS = Number(process.env.PROPERTY_RUNS ?? 2000)
const settings = (numRuns = RUNS) => ({ seed: SEED, numRuns, includeErrorInReport: true })

const CALLBACKS = [
  'onUserMessageCallback', 'beforeRunCallback', 'onEventCallback', 'afterRunCallback', 'beforeAgentCallback',
  'afterAgentCallback', 'beforeNodeCallback', 'afterNodeCallback', 'beforeModelCallback', 'afterModelCallback',
  'onModelErrorCallback', 'beforeToolSelection', 'beforeContextCompaction', 'afterContextCompaction',
  'beforeToolCallback', 'afterToolCallback', 'onToolErrorCallback',
]

// ---- hostile values, described as data (printable, replayable) and built fresh

// What a getter or trap throws: also values that cannot be turned into a
// string (issue 8 (a)).
const THROWN = {
  error: () => new Error('hostile'),
  nullProto: () => Object.create(null),
  trapsThrow: () => new Proxy({}, { get: () => { throw Object.create(null) }, getPrototypeOf: () => { throw Object.create(null) } }),
  toStringThrows: () => ({ toString: () => { throw Object.create(null) } }),
  errorMessageThrows: () => Object.defineProperty(new Error('x'), 'message', { get: () => { throw Object.create(null) } }),
  revokedProxy: () => revoked(),
  symbol: () => Symbol('thrown'),
  undefined: () => undefined,
}
const throwing = (kind) => () => {
  throw THROWN[kind]()
}
const thrower = throwing('error')
const TRAPS = ['get', 'set', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'defineProperty', 'deleteProperty', 'apply', 'construct', 'isExtensible', 'preventExtensions', 'setPrototypeOf']

function revoked(target = {}) {
  const { proxy, revoke } = Proxy.revocable(target, {})
  revoke()
  return proxy
}

const LEAVES = {
  undefined: () => undefined,
  null: () => null,
  zero: () => 0,
  nan: () => NaN,
  bigint: () => 10n ** 30n,
  symbol: () => Symbol('hostile'),
  true: () => true,
  function: () => function hostile() {},
  nullProto: () => Object.create(null),
  revokedProxy: () => revoked(),
  revokedFunctionProxy: () => revoked(function () {}),
  revokedInChain: () => Object.create(revoked()),
  trapsThrow: () => new Proxy({}, Object.fromEntries(TRAPS.map((t) => [t, throwing('nullProto')]))),
  toStringThrows: () => ({ toString: thrower, valueOf: thrower, [Symbol.toPrimitive]: thrower }),
  errorMessageThrows: () => Object.defineProperty(new Error('x'), 'message', { get: thrower }),
  errorNameThrows: () => Object.defineProperty(new Error('x'), 'name', { get: thrower }),
  errorNullProto: () => Object.setPrototypeOf(new Error('x'), null),
  realError: () => new Error("Error in tool 'tool': failed"),
  typeError: () => new TypeError('bad'),
  cyclic: () => {
    const o = { a: 1 }
    o.self = o
    o.list = [o]
    return o
  },
  thenThrows: () => ({ get then() { return thrower() } }),
  thenable: () => ({ then: (resolve) => resolve(undefined) }),
  toJSONThrows: () => ({ toJSON: thrower }),
  frozen: () => Object.freeze({ parts: Object.freeze([]) }),
  array: () => [1, 'x', null],
  hugeArray: () => new Array(1e6),
  date: () => new Date(NaN),
  map: () => new Map([[1, 2]]),
}

// Keys of ADK's callback parameters and of the objects inside them.
const KEYS = [
  'invocationContext', 'callbackContext', 'toolContext', 'invocationId', 'agentName', 'agent', 'name', 'tool',
  'toolArgs', 'error', 'result', 'event', 'llmRequest', 'llmResponse', 'userMessage', 'userContent', 'session',
  'id', 'appName', 'userId', 'content', 'parts', 'role', 'text', 'functionCall', 'functionResponse', 'response',
  'functionCallId', 'partial', 'message', 'toolsDict', 'config', 'tools', 'model', 'errorCode', 'errorMessage',
  'author', 'usageMetadata', 'subAgents', 'rootAgent', 'parentAgent', 'description', 'finishReason',
  'promptTokenCount', 'response_type', 'contents', 'systemInstruction', 'functionDeclarations', 'runAsync',
]

// Strings with lone surrogates, NULs, the key escape character and U+FFFD.
const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('a', '\0', '\uD800', '\uDBFF', '\uDC00', '\uFFFD', '\uFDD0', '\uE000', 'e-1'), maxLength: 6 }),
)

const node = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...Object.keys(LEAVES)).map((leaf) => ({ leaf })),
    hostileString.map((string) => ({ string })),
    fc.double().map((number) => ({ number })),
    fc.record({
      fields: fc.dictionary(fc.constantFrom(...KEYS), tie('node'), { maxKeys: 6 }),
      throwing: fc.array(fc.tuple(fc.constantFrom(...KEYS), fc.constantFrom(...Object.keys(THROWN))), { maxLength: 2 }),
      proto: fc.constantFrom('object', 'null', 'revoked', 'error', 'array'),
    }),
  ),
})).node

function build(d) {
  if ('leaf' in d) return LEAVES[d.leaf]()
  if ('string' in d) return d.string
  if ('number' in d) return d.number
  const proto = { object: Object.prototype, null: null, revoked: revoked(), error: Error.prototype, array: Array.prototype }[d.proto]
  const o = Object.create(proto)
  // defineProperty: an assignment would consult a revoked prototype.
  for (const [k, v] of Object.entries(d.fields)) Object.defineProperty(o, k, { value: build(v), enumerable: true, writable: true, configurable: true })
  for (const [k, kind] of d.throwing) Object.defineProperty(o, k, { get: throwing(kind), enumerable: true, configurable: true })
  return o
}

const plain = (v) => v === undefined || (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)

/** Calls `plugin[name](params)`; checks the outcome. `mayReject(reason)`: a permitted rejection. */
async function check(plugin, name, params, mayReject = () => false) {
  let out
  try {
    out = plugin[name](params)
  } catch (e) {
    assert.fail(`${name} threw synchronously: ${String(e?.message ?? typeof e)}`)
  }
  assert.ok(types.isPromise(out), `${name} returned a ${typeof out}, not a Promise`)
  let value
  try {
    value = await out
  } catch (reason) {
    assert.ok(mayReject(reason), `${name} rejected: ${(() => { try { return String(reason?.message ?? reason) } catch { return 'unprintable' } })()}`)
    return
  }
  assert.ok(plain(value), `${name} resolved to ${value === null ? 'null' : typeof value} ${value?.constructor?.name ?? ''}`)
}

function readError(params) {
  try {
    return { ok: true, error: params.error }
  } catch {
    return { ok: false }
  }
}

test('every callback of both plugins stays well-behaved under hostile parameters', { timeout: 120_000 }, async () => {
  process.on('warning', () => {}) // TracingPlugin warns once per kind of problem
  const tracing = new TracingPlugin({ exporter: 'memory', captureContent: true })
  const retries = [
    new ReflectAndRetryToolPlugin({ maxRetries: 1 }),
    new ReflectAndRetryToolPlugin({ name: 'r2', maxRetries: 0, throwExceptionIfRetryExceeded: false, trackingScope: 'global' }),
  ]
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...CALLBACKS), node, async (name, d) => {
      const params = build(d)
      await check(tracing, name, params)
      for (const retry of retries) {
        // Fresh values: a callback may change what it was given (toolsDict).
        const p = build(d)
        const given = readError(p)
        // Only onToolErrorCallback, past the limit, with the very error given.
        await check(retry, name, p, (reason) => name === 'onToolErrorCallback' && retry.throwExceptionIfRetryExceeded && given.ok && Object.is(reason, given.error))
      }
    }),
    settings(),
  )
  // Sync methods of the public surface too.
  for (const d of fc.sample(node, { seed: SEED, numRuns: 300 })) {
    const v = build(d)
    assert.doesNotThrow(() => tracing.finishInterruptedInvocation(v))
    assert.doesNotThrow(() => tracing.traceIdOf(v))
    for (const retry of retries) assert.doesNotThrow(() => retry.finishInterruptedInvocation(v))
  }
  await tracing.shutdown()
})

// ---- distinct strings are distinct keys ----------------------------------------

const keyString = fc.string({ unit: fc.constantFrom('a', 'b', '\0', '\uD800', '\uDBFF', '\uDC00', '\uFFFD', '\uFDD0', '\uE000'), maxLength: 4 })
const distinctPairs = fc
  .tuple(keyString, keyString, keyString, keyString)
  .filter(([s1, t1, s2, t2]) => s1 !== s2 || t1 !== t2)

const toolParams = (invocationId, toolName, error = new Error('failed')) => ({
  tool: { name: toolName },
  toolArgs: {},
  toolContext: { invocationId, functionCallId: undefined },
  error,
})

test('retry: two distinct (invocation, tool) pairs never share a count', { timeout: 60_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(distinctPairs, fc.integer({ min: 1, max: 3 }), async ([s1, t1, s2, t2], k) => {
      const retry = new ReflectAndRetryToolPlugin({ maxRetries: 100, throwExceptionIfRetryExceeded: false })
      for (let i = 1; i <= k; i++) assert.equal((await retry.onToolErrorCallback(toolParams(s1, t1))).retry_count, i)
      assert.equal((await retry.onToolErrorCallback(toolParams(s2, t2))).retry_count, 1, 'the other pair starts at 1')
      // A success of the other pair resets only its own count.
      await retry.afterToolCallback({ ...toolParams(s2, t2), result: { ok: true } })
      assert.equal((await retry.onToolErrorCallback(toolParams(s1, t1))).retry_count, k + 1)
      // The end of the other invocation drops only its counts.
      if (s1 !== s2) {
        await retry.afterRunCallback({ invocationContext: { invocationId: s2 } })
        assert.equal((await retry.onToolErrorCallback(toolParams(s1, t1))).retry_count, k + 2)
      }
    }),
    settings(1000),
  )
})

test('retry: the NUL and lone-surrogate collisions of issue 8 stay apart', async () => {
  const cases = [
    [['\uD800', 't'], ['\uDBFF', 't']],
    [['inv', '\uD800'], ['inv', '\uDBFF']],
    [['a\0b', 'c'], ['a', 'b\0c']],
  ]
  for (const [[s1, t1], [s2, t2]] of cases) {
    const retry = new ReflectAndRetryToolPlugin({ maxRetries: 5, throwExceptionIfRetryExceeded: false })
    await retry.onToolErrorCallback(toolParams(s1, t1))
    await retry.onToolErrorCallback(toolParams(s1, t1))
    assert.equal((await retry.onToolErrorCallback(toolParams(s2, t2))).retry_count, 1, JSON.stringify([s1, t1, s2, t2]))
  }
})

test('tracing: invocation ids and tool names that differ get their own traces and spans', { timeout: 60_000 }, async () => {
  const distinct = fc.tuple(keyString, keyString).filter(([a, b]) => a !== b)
  await fc.assert(
    fc.asyncProperty(distinct, distinct, async ([a, b], [x, y]) => {
      const tracing = new TracingPlugin({ exporter: 'memory' })
      const ic = (invocationId) => ({ invocationContext: { invocationId, session: { id: 's' } } })
      await tracing.beforeRunCallback(ic(a))
      await tracing.beforeRunCallback(ic(b))
      assert.equal(tracing.openInvocationCount, 2)
      const [ta, tb] = [tracing.traceIdOf(a), tracing.traceIdOf(b)]
      assert.notEqual(ta, tb)
      // Tool spans without call ids are matched by (agent, tool) name: an
      // error of tool y must land on y's span, not on x's.
      const toolContext = { invocationId: a, agentName: 'agent', functionCallId: undefined }
      await tracing.beforeToolCallback({ tool: { name: x }, toolArgs: {}, toolContext })
      await new Promise((r) => setImmediate(r))
      await tracing.beforeToolCallback({ tool: { name: y }, toolArgs: {}, toolContext })
      await tracing.onToolErrorCallback({ tool: { name: y }, toolArgs: {}, toolContext, error: new Error('y failed') })
      await tracing.afterRunCallback(ic(a))
      await tracing.afterRunCallback(ic(b))
      const spans = tracing.getFinishedSpans()
      // In start order: x's span first (spans are read in end order, and
      // y's, ended by its error, ended first). The names may read alike.
      const tools = spans
        .filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool')
        .sort((p, q) => (p.startTimeUnixNano < q.startTimeUnixNano ? -1 : p.startTimeUnixNano > q.startTimeUnixNano ? 1 : 0))
      assert.equal(tools.length, 2)
      assert.ok(tools[0].startTimeUnixNano < tools[1].startTimeUnixNano)
      assert.deepEqual(tools.map((s) => s.status.code), [0, 2], 'the first tool span (x) is not the failed one')
      const ids = new Set(spans.map((s) => s.spanId))
      const roots = spans.filter((s) => !ids.has(s.parentSpanId))
      assert.deepEqual(new Set(roots.map((s) => s.traceId)), new Set([ta, tb]))
      await tracing.shutdown()
    }),
    settings(500),
  )
})
