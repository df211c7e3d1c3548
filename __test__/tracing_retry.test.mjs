// Retry-aware tool spans (tracing.md "Tool spans"): a ReflectAndRetryToolPlugin
// response as the final function response makes the span ERROR with
// adk.retry.count / adk.retry.outcome, whichever order the plugins run in,
// for thrown errors and for errors found in results.
import test from 'node:test'
import assert from 'node:assert/strict'
import { FunctionTool } from '@google/adk'
import { ReflectAndRetryToolPlugin } from '../index.js'
import { call, runOnce } from './helpers/scripted_llm.mjs'
import { agent, traced, byName } from './helpers/tracing_helpers.mjs'

class ValueError extends Error {
  constructor(m) {
    super(m)
    this.name = 'ValueError'
  }
}

function flaky(mode) {
  return new FunctionTool({
    name: 'flaky',
    description: 'fails',
    execute: async () => {
      if (mode === 'result') return { error: 'bad input' }
      throw new ValueError('nope')
    },
  })
}


async function runReal(order, mode, options) {
  const root = agent('a', [call('flaky', {}), call('flaky', {}), call('flaky', {}), 'gave up'], { tools: [flaky(mode)] })
  const retry = new ReflectAndRetryToolPlugin({
    maxRetries: 1,
    throwExceptionIfRetryExceeded: false,
    ...(mode === 'result' ? { resultErrorExtractor: ({ result }) => result?.error } : {}),
    ...options,
  })
  const { tracing, runner } = traced(root, order === 'before' ? { before: [retry] } : { plugins: [retry] })
  await runOnce(runner)
  const spans = byName(tracing.getFinishedSpans(), 'execute_tool flaky')
  assert.equal(spans.length, 3)
  assert.equal(tracing.openInvocationCount, 0)
  return spans
}

for (const order of ['before', 'after']) {
  for (const mode of ['thrown', 'result']) {
    test(`retry plugin ${order} tracing, error ${mode}`, async () => {
      const spans = await runReal(order, mode)
      const errorType = mode === 'thrown' ? 'Error' : 'ToolError'
      assert.deepEqual(
        spans.map((s) => [s.status.code, s.attributes['error.type'], s.attributes['adk.retry.count'], s.attributes['adk.retry.outcome']]),
        [
          [2, errorType, 1, 'retry'],
          [2, errorType, 1, 'exceeded'],
          [2, errorType, 1, 'exceeded'],
        ],
      )
    })
  }
  test(`retry plugin ${order} tracing: non-retryable`, async () => {
    const spans = await runReal(order, 'thrown', { retryPredicate: () => false })
    for (const s of spans) {
      assert.equal(s.attributes['adk.retry.outcome'], 'non_retryable')
      assert.equal(s.attributes['adk.retry.count'], 0)
    }
  })
}

test('retry attributes do not depend on content capture', async () => {
  const root = agent('a', [call('flaky', {}), 'gave up'], { tools: [flaky('thrown')] })
  const { tracing, runner } = traced(root, { captureContent: false, plugins: [new ReflectAndRetryToolPlugin()] })
  await runOnce(runner)
  const [span] = byName(tracing.getFinishedSpans(), 'execute_tool flaky')
  assert.equal(span.attributes['adk.retry.outcome'], 'retry')
  assert.equal(span.attributes['adk.retry.count'], 1)
  assert.equal(span.attributes['gen_ai.tool.call.arguments'], undefined)
})

// Past the limit with throwExceptionIfRetryExceeded (the default), ADK emits
// no function response: the plugin's rethrow becomes an error event of the
// agent, which ends the span as ERROR (not interrupted) in either order.
for (const order of ['before', 'after']) {
  test(`retry plugin ${order} tracing, rethrowing past the limit: the span ends with the error`, async () => {
    const root = agent('a', [call('flaky', {}), call('flaky', {}), 'gave up'], { tools: [flaky('thrown')] })
    const retry = new ReflectAndRetryToolPlugin({ maxRetries: 1 })
    const { tracing, runner } = traced(root, order === 'before' ? { before: [retry] } : { plugins: [retry] })
    await runOnce(runner)
    const spans = byName(tracing.getFinishedSpans(), 'execute_tool flaky')
    assert.equal(spans.length, 2)
    assert.equal(spans[0].attributes['adk.retry.outcome'], 'retry')
    const last = spans[1]
    assert.equal(last.status.code, 2)
    assert.match(last.status.message, /nope/)
    assert.equal(last.attributes['weave.google_adk.interrupted'], undefined)
    assert.equal(tracing.openInvocationCount, 0)
  })
}
