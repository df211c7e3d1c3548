// What the exporter does with the collector's answers, through TracingPlugin
// and a real run: 429 + Retry-After, 503/502 retried and delivered once;
// 500 and 400 not retried, the batch dropped and counted, one process
// warning saying what the collector answered; a collector that is down and
// comes back on the same port.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startReceiver } from './helpers/otlp_receiver.mjs'
import { TracingPlugin, freePort, recordWarnings, runWeather, settle, sleep, weatherRunner } from './fixtures/otlp_common.mjs'
import { margin } from './helpers/timing.mjs'

// The cases are independent (own receiver, own plugin): run them side by side.
describe('OTLP delivery answers', { concurrency: true }, () => {
  function traced(endpoint, batch = {}) {
    // One batch per run: a long schedule, so only forceFlush sends.
    const plugin = new TracingPlugin({ endpoint, batch: { scheduledDelayMillis: 60_000, exportTimeoutMillis: 8000, ...batch } })
    return { plugin, runner: weatherRunner(plugin, { runs: 2 }) }
  }

  test('429 with Retry-After: 1, then 200: delivered exactly once, not before ~1 s', async () => {
    const rx = await startReceiver({ script: [{ status: 429, headers: { 'retry-after': '1' } }] })
    const warnings = recordWarnings()
    try {
      const { plugin, runner } = traced(rx.endpoint)
      await runWeather(runner)
      await plugin.forceFlush()
      assert.deepEqual(rx.requests.map((r) => r.answer), [429, 200])
      const gap = rx.requests[1].receivedAt - rx.requests[0].receivedAt
      assert.ok(gap >= 950, `Retry-After honoured: retried after ${gap} ms`)
      assert.ok(gap < 1000 + margin(3000), `retried promptly after Retry-After: ${gap} ms`)
      assert.equal(rx.spans.length, 5, 'accepted once')
      assert.equal(new Set(rx.spans.map((s) => s.spanId)).size, 5)
      assert.equal(rx.requests[0].spanCount, 5, 'the retry resends the same batch')
      assert.deepEqual(rx.requests[1].body, rx.requests[0].body, 'byte-for-byte the same spans')
      assert.equal(plugin.droppedSpanCount, 0)
      await plugin.shutdown()
      await settle()
      assert.deepEqual(warnings.export(rx.endpoint), [], 'a delivered batch warns about nothing')
    } finally {
      warnings.stop()
      await rx.stop()
    }
  })

  // The first backoff alone is 0.8–1.2 s: only a longer Retry-After proves it is read.
  test('503 with Retry-After: 2 waits the 2 s, longer than the backoff', async () => {
    const rx = await startReceiver({ script: [{ status: 503, headers: { 'retry-after': '2' } }] })
    try {
      const { plugin, runner } = traced(rx.endpoint)
      await runWeather(runner)
      await plugin.forceFlush()
      assert.deepEqual(rx.requests.map((r) => r.answer), [503, 200])
      const gap = rx.requests[1].receivedAt - rx.requests[0].receivedAt
      assert.ok(gap >= 1950, `Retry-After honoured: retried after ${gap} ms`)
      assert.equal(rx.spans.length, 5)
      await plugin.shutdown()
    } finally {
      await rx.stop()
    }
  })

  test('Retry-After as an HTTP date is honoured too', async () => {
    // Whole seconds: a date 3 s ahead means at least 2 s from the answer.
    const rx = await startReceiver({ script: [() => ({ status: 503, headers: { 'retry-after': new Date(Date.now() + 3000).toUTCString() } })] })
    try {
      const { plugin, runner } = traced(rx.endpoint)
      await runWeather(runner)
      await plugin.forceFlush()
      assert.deepEqual(rx.requests.map((r) => r.answer), [503, 200])
      const gap = rx.requests[1].receivedAt - rx.requests[0].receivedAt
      assert.ok(gap >= 1900, `waited for the date: ${gap} ms`)
      assert.ok(gap < 3000 + margin(1500), `not much longer: ${gap} ms`)
      await plugin.shutdown()
    } finally {
      await rx.stop()
    }
  })

  test('503 then 502 then 200: retried with backoff, delivered exactly once', async () => {
    const rx = await startReceiver({ script: [503, 502] })
    try {
      const { plugin, runner } = traced(rx.endpoint)
      await runWeather(runner)
      await plugin.forceFlush()
      assert.deepEqual(rx.requests.map((r) => r.answer), [503, 502, 200])
      assert.equal(rx.spans.length, 5)
      assert.equal(new Set(rx.spans.map((s) => s.spanId)).size, 5)
      const [a, b, c] = rx.requests.map((r) => r.receivedAt)
      assert.ok(b - a >= 100 && c - b >= 100, `backoff between attempts: ${b - a} ms, ${c - b} ms`)
      assert.equal(plugin.droppedSpanCount, 0)
      await plugin.shutdown()
    } finally {
      await rx.stop()
    }
  })

  for (const status of [500, 400, 401, 404, 413]) {
    test(`${status}: not retried, the batch dropped and counted, one warning with the collector's answer`, async () => {
      const body = `collector says no (${status})`
      // Two runs, two batches: the second rejection must not warn again.
      const rx = await startReceiver({ script: [{ status, body }, { status, body }] })
      const warnings = recordWarnings()
      try {
        const { plugin, runner } = traced(rx.endpoint)
        await runWeather(runner)
        await plugin.forceFlush()
        await sleep(300) // a retry would come by now (backoff starts near 1 s; bounded below)
        assert.deepEqual(rx.requests.map((r) => r.answer), [status], 'one request, not retried')
        assert.equal(rx.spans.length, 0)
        assert.equal(plugin.droppedSpanCount, 5, 'the rejected batch counts as dropped')
        await settle()
        const w = warnings.export(rx.endpoint)
        assert.equal(w.length, 1, `one export warning: ${JSON.stringify(warnings.list)}`)
        assert.equal(w[0].name, 'TracingPluginWarning')
        assert.match(w[0].message, new RegExp(`HTTP ${status}`), 'says the status')
        assert.ok(w[0].message.includes(body), `says what the collector answered: ${w[0].message}`)
        assert.ok(w[0].message.includes(rx.endpoint), 'names the collector')

        await runWeather(runner)
        await plugin.forceFlush()
        await sleep(1500) // past the first backoff: still no retry
        assert.deepEqual(rx.requests.map((r) => r.answer), [status, status])
        assert.equal(plugin.droppedSpanCount, 10)
        await plugin.shutdown()
        await settle()
        assert.equal(warnings.export(rx.endpoint).length, 1, 'still one warning for this kind of problem')
      } finally {
        warnings.stop()
        await rx.stop()
      }
    })
  }

  test('504, and a connection closed without an answer, are retried: delivered once', async () => {
    const rx = await startReceiver({ script: [504, 'close'] })
    try {
      const { plugin, runner } = traced(rx.endpoint)
      await runWeather(runner)
      await plugin.forceFlush()
      assert.deepEqual(rx.requests.map((r) => r.answer), [504, 'close', 200])
      assert.equal(rx.spans.length, 5)
      assert.equal(plugin.droppedSpanCount, 0)
      await plugin.shutdown()
    } finally {
      await rx.stop()
    }
  })

  test('exportTimeoutMillis bounds the retries: a collector that keeps answering 503 costs one batch, counted, one warning', async (t) => {
    const rx = await startReceiver({ fallback: 503 })
    const warnings = recordWarnings()
    try {
      const { plugin, runner } = traced(rx.endpoint, { exportTimeoutMillis: 2500 })
      await runWeather(runner)
      const t0 = performance.now()
      await plugin.forceFlush()
      const ms = performance.now() - t0
      t.diagnostic(`gave up after ${ms.toFixed(0)} ms and ${rx.requests.length} attempts`)
      assert.ok(ms < 2500 + margin(1000), `forceFlush resolved within exportTimeoutMillis: ${ms.toFixed(0)} ms`)
      assert.ok(rx.requests.length >= 2, 'retried at least once')
      assert.ok(rx.requests.every((r) => r.answer === 503))
      const last = rx.requests.at(-1).receivedAt - rx.requests[0].receivedAt
      assert.ok(last < 2500, `no attempt after the budget: the last came ${last} ms after the first`)
      assert.equal(plugin.droppedSpanCount, 5)
      await settle()
      const w = warnings.export(rx.endpoint)
      assert.equal(w.length, 1, JSON.stringify(warnings.list))
      assert.match(w[0].message, /exportTimeoutMillis \(2500 ms/)
      assert.match(w[0].message, /HTTP 503/, 'says what the collector last answered')
      await plugin.shutdown()
    } finally {
      warnings.stop()
      await rx.stop()
    }
  })

  test('a Retry-After beyond exportTimeoutMillis: the batch is given up at once, not waited for', async () => {
    const rx = await startReceiver({ script: [{ status: 429, headers: { 'retry-after': '120' } }] })
    try {
      const { plugin, runner } = traced(rx.endpoint, { exportTimeoutMillis: 3000 })
      await runWeather(runner)
      const t0 = performance.now()
      await plugin.forceFlush()
      const ms = performance.now() - t0
      assert.ok(ms < 3000 + margin(1000), `forceFlush resolved within exportTimeoutMillis: ${ms.toFixed(0)} ms`)
      assert.deepEqual(rx.requests.map((r) => r.answer), [429])
      assert.equal(plugin.droppedSpanCount, 5)
      await plugin.shutdown()
    } finally {
      await rx.stop()
    }
  })

  test('one warning per process for one kind of problem at one collector, whatever its words and however many plugins', async () => {
    const rx = await startReceiver({ script: [{ status: 400, body: 'first reason' }, { status: 400, body: 'second reason' }] })
    const warnings = recordWarnings()
    try {
      for (let i = 0; i < 2; i++) {
        const { plugin, runner } = traced(rx.endpoint)
        await runWeather(runner)
        await plugin.forceFlush()
        await plugin.shutdown()
      }
      assert.deepEqual(rx.requests.map((r) => r.answer), [400, 400])
      await settle()
      const w = warnings.export(rx.endpoint)
      assert.equal(w.length, 1, JSON.stringify(warnings.list))
      assert.match(w[0].message, /HTTP 400: first reason/)
    } finally {
      warnings.stop()
      await rx.stop()
    }
  })

  test('a 200 with partial_success: not sent again, the rejected spans counted, one warning with its message', async () => {
    const message = Buffer.from('2 spans were too large')
    const inner = Buffer.concat([Buffer.from([0x08, 0x02, 0x12, message.length]), message])
    const body = Buffer.concat([Buffer.from([0x0a, inner.length]), inner])
    const rx = await startReceiver({ script: [{ status: 200, body }] })
    const warnings = recordWarnings()
    try {
      const { plugin, runner } = traced(rx.endpoint)
      await runWeather(runner)
      await plugin.forceFlush()
      await sleep(300)
      assert.deepEqual(rx.requests.map((r) => r.answer), [200])
      assert.equal(plugin.droppedSpanCount, 2)
      await settle()
      const w = warnings.export(rx.endpoint)
      assert.equal(w.length, 1, JSON.stringify(warnings.list))
      assert.match(w[0].message, /2 spans were too large/)
      await plugin.shutdown()
    } finally {
      warnings.stop()
      await rx.stop()
    }
  })

  /** A 403 whose body echoes the request line and its Authorization header; returns the warnings. */
  async function echoedSecrets(endpoint, rx) {
    const warnings = recordWarnings()
    try {
      const plugin = new TracingPlugin({ endpoint, headers: { authorization: 'Bearer hdr-secret-777' }, batch: { scheduledDelayMillis: 60_000 } })
      await runWeather(weatherRunner(plugin))
      await plugin.forceFlush()
      await settle()
      await plugin.shutdown()
      assert.equal(rx.requests[0].headers.authorization, 'Bearer hdr-secret-777', 'the header was sent')
      const w = warnings.export(rx.url)
      assert.equal(w.length, 1, JSON.stringify(warnings.list))
      assert.match(w[0].message, /HTTP 403/)
      return warnings.list
    } finally {
      warnings.stop()
    }
  }
  const echo403 = () => startReceiver({ script: [(rec) => ({ status: 403, body: `denied ${rec.path} auth=${rec.headers.authorization}` })] })

  test('header values never reach a warning, even when the collector echoes them', async () => {
    const rx = await echo403()
    try {
      for (const { message } of await echoedSecrets(rx.endpoint, rx)) {
        assert.ok(!message.includes('hdr-secret-777'), `header secret in a warning: ${message}`)
      }
    } finally {
      await rx.stop()
    }
  })

  // The endpoint's query is cut from the URL the warnings show; its values
  // are redacted too when a collector's error body echoes the request line.
  test('a token in the endpoint query never reaches a warning, even when the collector echoes it', async () => {
    const rx = await echo403()
    try {
      const list = await echoedSecrets(`${rx.endpoint}?token=qs-secret-999`, rx)
      assert.equal(rx.requests[0].path, '/v1/traces?token=qs-secret-999', 'the query was sent')
      for (const { message } of list) assert.ok(!message.includes('qs-secret-999'), `query secret in a warning: ${message}`)
    } finally {
      await rx.stop()
    }
  })

  test('connection refused, then the collector comes up on the same port: delivered', async () => {
    const port = await freePort()
    const endpoint = `http://127.0.0.1:${port}/v1/traces`
    const { plugin, runner } = traced(endpoint)
    await runWeather(runner)
    const flushed = plugin.forceFlush()
    await sleep(200) // the first attempt is refused by now; the retry waits ~1 s
    const rx = await startReceiver({ port })
    try {
      await flushed
      assert.equal(rx.spans.length, 5, 'delivered after the collector came up')
      assert.deepEqual(rx.requests.map((r) => r.answer), [200], 'delivered once')
      assert.equal(plugin.droppedSpanCount, 0)
      await plugin.shutdown()
    } finally {
      await rx.stop()
    }
  })
})
