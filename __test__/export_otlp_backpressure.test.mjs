// A collector that hangs must cost the agent nothing: the run goes on at full
// speed, forceFlush gives up within exportTimeoutMillis, the batch is dropped
// and counted. A full queue drops the oldest spans and delivers the newest.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startReceiver } from './helpers/otlp_receiver.mjs'
import { TracingPlugin, recordWarnings, runWeather, settle, weatherRunner } from './fixtures/otlp_common.mjs'
import { margin } from './helpers/timing.mjs'

describe('a slow or hanging collector', { concurrency: true }, () => {
  test('hang: the run is unaffected, forceFlush resolves within exportTimeoutMillis, the batch is dropped and counted', async () => {
    // Long enough for a run on a slow machine: the second run must end while the collector hangs.
    const exportTimeoutMillis = margin(1500)
    const rx = await startReceiver({ script: ['hang'] })
    const warnings = recordWarnings()
    try {
      const plugin = new TracingPlugin({ endpoint: rx.endpoint, batch: { scheduledDelayMillis: 0, exportTimeoutMillis } })
      const runner = weatherRunner(plugin, { runs: 2 })
      await runWeather(runner)
      // The first batch is on the wire and the collector sits on it.
      await rx.waitForRequests(1, 30_000)
      const hungAt = Date.now()
      const second = await runWeather(runner)
      assert.equal(rx.requests[0].answer, 'hang')
      assert.ok(Date.now() - hungAt < exportTimeoutMillis, 'the second run finished while the collector still hung')
      assert.equal(plugin.droppedSpanCount, 0, 'the hung export was not given up yet')
      assert.ok(second.ms < margin(500), `the run is not slowed by the hanging export: ${second.ms.toFixed(0)} ms`)

      const t0 = performance.now()
      await plugin.forceFlush()
      const flushMs = performance.now() - t0
      assert.ok(flushMs < exportTimeoutMillis + margin(1000), `forceFlush gave up in time: ${flushMs.toFixed(0)} ms`)

      const hung = rx.requests[0].spanCount
      assert.ok(hung >= 1, 'the hanging request carried spans')
      assert.equal(plugin.droppedSpanCount, hung, 'exactly the hung batch is dropped and counted')
      assert.equal(rx.spans.length + hung, 10, 'every other span was delivered after the hang')
      assert.equal(rx.allSpans.length - rx.spans.length, hung, 'the hung batch was not sent again')
      await settle()
      const w = warnings.export(rx.endpoint)
      assert.equal(w.length, 1, JSON.stringify(warnings.list))
      assert.ok(w[0].message.includes(`exportTimeoutMillis (${exportTimeoutMillis} ms`), w[0].message)
      assert.match(w[0].message, new RegExp(`${hung} spans? (was|were) dropped`))
      await plugin.shutdown()
    } finally {
      warnings.stop()
      await rx.stop()
    }
  })

  test('shutdown() with a hanging collector resolves within exportTimeoutMillis; the batch is dropped and counted', async () => {
    const exportTimeoutMillis = 1200
    const rx = await startReceiver({ fallback: 'hang' })
    try {
      const plugin = new TracingPlugin({ endpoint: rx.endpoint, batch: { scheduledDelayMillis: 60_000, exportTimeoutMillis } })
      await runWeather(weatherRunner(plugin))
      const t0 = performance.now()
      await plugin.shutdown()
      const ms = performance.now() - t0
      assert.ok(ms < exportTimeoutMillis + margin(1000), `shutdown resolved in ${ms.toFixed(0)} ms`)
      assert.ok(rx.counts.requests >= 1, 'it tried')
      assert.equal(plugin.droppedSpanCount, 5)
      assert.equal(rx.spans.length, 0)
    } finally {
      await rx.stop()
    }
  })

  test('queue overflow: the oldest spans are dropped and counted, the newest delivered', async () => {
    const maxQueueSize = 4
    // The first request is held until the three runs are over, however long they take (an
    // export timeout raced them on a loaded machine); then it is answered, and delivered.
    let release
    const released = new Promise((resolve) => (release = resolve))
    const rx = await startReceiver({ script: [{ status: 200, until: released }] })
    const warnings = recordWarnings()
    try {
      const plugin = new TracingPlugin({
        endpoint: rx.endpoint,
        batch: { maxQueueSize, maxExportBatchSize: 1, scheduledDelayMillis: 0, exportTimeoutMillis: 60_000 },
      })
      // Same callbacks, same spans: a memory twin gives the end order.
      const twin = new TracingPlugin({ name: 'memory_twin', exporter: 'memory' })
      const runner = weatherRunner([plugin, twin], { runs: 3 })
      const runs = []
      for (let i = 0; i < 3; i++) {
        runs.push(await runWeather(runner))
        // Each run's spans reach the queue before the next run's: reading a
        // count hands the records over and waits until they are applied.
        assert.equal(plugin.openInvocationCount, 0)
        // The exporter thread has taken one of the first run's spans (its
        // request is held) before the next run's spans arrive: on a busy
        // machine it could otherwise wake only after they pushed all of the
        // first run's out.
        if (i === 0) await rx.waitForRequests(1, 30_000)
      }
      assert.equal(rx.requests[0].spanCount, 1, 'one span per batch')
      assert.ok(rx.counts.requests === 1, 'nothing else was sent while the first request was held')

      const ended = twin.getFinishedSpans()
      assert.equal(ended.length, 15)
      release()
      await plugin.forceFlush()

      // 15 ended: 1 held (then delivered), 10 pushed out of the queue, the last 4 delivered.
      assert.equal(plugin.droppedSpanCount, 15 - 1 - maxQueueSize, 'the overflow, all counted')
      assert.equal(rx.spans.length, 1 + maxQueueSize)
      // A run's spans reach the queue together when its records are applied
      // (lib/tracing/records.js), so the exporter thread takes one of the
      // first run's spans while the others still arrive.
      const session = (s) => s.attributes['gen_ai.conversation.id']
      assert.notEqual(session(ended[0]), session(ended[14]), 'one session per run')
      assert.equal(session(rx.spans[0]), session(ended[0]), `the held span is one of the first run's: ${rx.spans[0].name}`)
      const delivered = rx.spans.slice(1)
      const key = (name, attrs) => `${name}|${attrs['gen_ai.agent.id'] ?? attrs['gen_ai.agent.name']}|${attrs['gen_ai.tool.call.id'] ?? ''}`
      // Spans are told apart by name, the invocation (roots and agent spans carry it) and
      // their position among same-named spans of the last run.
      const lastRun = runs[2].invocationId
      const newest = ended.slice(-maxQueueSize)
      assert.deepEqual(
        delivered.map((s) => s.name),
        newest.map((s) => s.name),
        'the newest spans, in end order',
      )
      const lastTrace = delivered.find((s) => s.parentSpanId === undefined)
      assert.ok(lastTrace, 'the last root span is among the delivered')
      assert.equal(lastTrace.attributes['gen_ai.agent.id'], lastRun)
      assert.ok(delivered.every((s) => s.traceId === lastTrace.traceId), 'all from the last run')
      assert.deepEqual(delivered.map((s) => key(s.name, s.attributes)), newest.map((s) => key(s.name, s.attributes)))
      await settle()
      assert.ok(
        warnings.export(rx.endpoint).some((w) => /queue is full \(maxQueueSize 4\)/.test(w.message)),
        `an overflow warning: ${JSON.stringify(warnings.list)}`,
      )
      await plugin.shutdown()
    } finally {
      release()
      warnings.stop()
      await rx.stop()
    }
  })

  // Regression: napi-rs keeps an instance borrowed while an AsyncTask of one
  // of its `&mut self` methods is pending; flushes once went through the
  // tracer, so every callback of a concurrent run failed and was not traced.
  test('a run during a pending forceFlush() (slow collector) is traced and delivered; the getters keep working', async () => {
    const rx = await startReceiver({ fallback: { status: 200, delayMs: 400 } })
    const warnings = recordWarnings()
    try {
      const plugin = new TracingPlugin({ endpoint: rx.endpoint, batch: { scheduledDelayMillis: 60_000, exportTimeoutMillis: 5000 } })
      const runner = weatherRunner(plugin, { runs: 2 })
      await runWeather(runner)
      const flushing = plugin.forceFlush()
      await rx.waitForRequests(1, 30_000)
      // The collector takes its time to answer; the app goes on.
      assert.equal(plugin.droppedSpanCount, 0)
      assert.equal(plugin.openInvocationCount, 0)
      const second = await runWeather(runner)
      await flushing
      await plugin.forceFlush()
      await settle()
      // The sibling tests run concurrently and their exporters warn (queue
      // full, timeouts): only callback failures and this endpoint's own
      // export warnings belong to this test.
      const ours = warnings.list.filter(
        (w) => String(w.code).startsWith('ADK_TRACING') && (w.code !== 'ADK_TRACING_EXPORT' || w.message.includes(rx.endpoint)),
      )
      assert.deepEqual(ours, [], 'no tracing warnings')
      assert.equal(rx.spans.length, 10, 'both runs delivered')
      assert.ok(rx.spans.some((s) => s.attributes['gen_ai.agent.id'] === second.invocationId), 'the second run is traced')
      await plugin.shutdown()
    } finally {
      warnings.stop()
      await rx.stop()
    }
  })
})
