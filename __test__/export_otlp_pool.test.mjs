// A pending forceFlush() must not hold a thread of libuv's pool: the pool's
// few threads (UV_THREADPOOL_SIZE, 4 by default) also serve the app's fs,
// dns.lookup, zlib and crypto, and a flush waits as long as the collector
// takes (up to exportTimeoutMillis per batch). Regression: flushes once ran
// as napi AsyncTasks on that pool, so as many flushes as it has threads,
// against a slow collector, stalled every fs call of the app (and a flush
// queued behind them started its export late).
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { startReceiver } from './helpers/otlp_receiver.mjs'
import { TracingPlugin, runWeather, weatherRunner } from './fixtures/otlp_common.mjs'

test('while a pool\'s worth of forceFlush() calls wait on a collector, fs still works', async () => {
  const poolSize = Number(process.env.UV_THREADPOOL_SIZE) || 4
  let release
  const released = new Promise((resolve) => (release = resolve))
  // Every request is held until the fs call below has come back (or failed to).
  const rx = await startReceiver({ fallback: { status: 200, until: released } })
  try {
    const plugins = []
    for (let i = 0; i < poolSize + 1; i++) {
      const plugin = new TracingPlugin({ endpoint: rx.endpoint, batch: { scheduledDelayMillis: 600_000, exportTimeoutMillis: 60_000 } })
      await runWeather(weatherRunner(plugin))
      plugins.push(plugin)
    }
    let flushed = 0
    const flushes = plugins.map((p) => p.forceFlush().then(() => flushed++))
    // Every flush has its batch on the wire (one queued behind a busy pool would not).
    await rx.waitForRequests(plugins.length, 30_000)
    assert.equal(flushed, 0, 'the collector holds every answer')

    // The bound only turns a stall into a failure report: with the flushes on
    // the pool, readFile waits for the release, which comes after it.
    let timer
    const text = await Promise.race([
      readFile(fileURLToPath(import.meta.url), 'utf8'),
      new Promise((resolve) => (timer = setTimeout(resolve, 30_000, 'fs stalled'))),
    ])
    clearTimeout(timer)
    assert.match(text, /forceFlush/, 'fs answered while every flush was still waiting')
    assert.equal(flushed, 0, 'no flush had ended yet')

    release()
    await Promise.all(flushes)
    assert.equal(rx.spans.length, 5 * plugins.length, 'then every flush delivered')
    await Promise.all(plugins.map((p) => p.shutdown()))
  } finally {
    release()
    await rx.stop()
  }
})
