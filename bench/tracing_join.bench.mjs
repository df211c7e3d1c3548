// What joinActiveTrace costs the main thread per invocation: scripted
// InMemoryRunner invocations (5 spans each) traced with exporter 'none' (no
// exporter thread: all the plugin's work is on the main thread), side by side
// in one process, alternating in rounds:
//   untraced        no plugin
//   before          BENCH_BEFORE=/path/to/old/index.js: that build's TracingPlugin
//   join off        joinActiveTrace: false
//   join, no span   the default, runs outside any span
//   join, in span   the default, each run inside an active span (joins it)
// An AsyncLocalStorageContextManager is registered for all variants, as in an
// instrumented service. Reported: median over rounds of µs per invocation, and
// of the difference to untraced in the same round (the plugin's cost).
//
//   node --expose-gc bench/tracing_join.bench.mjs     (or: npm run bench -- tracing_join)
//   BENCH_INVOCATIONS (per variant and round, 300), BENCH_ROUNDS (15)
import { createRequire } from 'node:module'
import { context, trace, TraceFlags } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { call } from '../__test__/helpers/scripted_llm.mjs'
import { weatherRunner } from './helpers/weather_runner.mjs'

const require = createRequire(import.meta.url)
const { TracingPlugin } = require('../index.js')
const Before = process.env.BENCH_BEFORE ? require(process.env.BENCH_BEFORE).TracingPlugin : undefined
const N = Number(process.env.BENCH_INVOCATIONS ?? 300)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15)
const APP = 'join_bench'
const gc = globalThis.gc ?? (() => {})

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const hex = (n, width) => n.toString(16).padStart(width, '0')
// A non-recording span of the "service": only our plugin's cost is measured.
const serviceContext = (i) =>
  trace.setSpanContext(context.active(), { traceId: hex(i + 1, 32), spanId: hex(i + 1, 16), traceFlags: TraceFlags.SAMPLED })

function variant(name, plugin, inSpan = false) {
  return { name, plugin, inSpan, ...weatherRunner(APP, plugin), samples: [] }
}

async function invoke(v, i) {
  v.llm.script.push(call('lookup', { city: 'Paris' }), `Sunny in Paris (${i}).`)
  const session = await v.runner.sessionService.createSession({ appName: APP, userId: 'u' })
  const run = async () => {
    for await (const _ of v.runner.runAsync({ userId: 'u', sessionId: session.id, newMessage: { role: 'user', parts: [{ text: 'Weather in Paris?' }] } }));
  }
  if (v.inSpan) await context.with(serviceContext(i), run)
  else await run()
  await v.runner.sessionService.deleteSession({ appName: APP, userId: 'u', sessionId: session.id })
  v.llm.requests.length = 0
}

async function segment(v, count) {
  gc()
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < count; i++) await invoke(v, i)
  return Number(process.hrtime.bigint() - t0) / 1000 / count
}

const variants = [
  variant('untraced', undefined),
  ...(Before ? [variant('before', new Before({ exporter: 'none' }))] : []),
  variant('join off', new TracingPlugin({ exporter: 'none', joinActiveTrace: false })),
  variant('join, no span', new TracingPlugin({ exporter: 'none' })),
  variant('join, in span', new TracingPlugin({ exporter: 'none' }), true),
]
for (const v of variants) await segment(v, Math.min(N, 200)) // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < variants.length; k++) {
    const v = variants[(r + k) % variants.length]
    v.samples.push(await segment(v, N))
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const base = variants[0]
console.log(`node ${process.version}, ${ROUNDS} rounds x ${N} invocations per variant, exporter 'none'`)
console.log("variant            µs/invocation   plugin's cost (vs untraced, same round)")
for (const v of variants) {
  const added = v === base ? '' : median(v.samples.map((x, i) => x - base.samples[i])).toFixed(1).padStart(8)
  console.log(`${v.name.padEnd(18)} ${median(v.samples).toFixed(1).padStart(10)}      ${added}`)
}
for (const v of variants) await v.plugin?.shutdown()

// The lookup itself, per run start (lib/tracing/active_parent.js; made
// twice per run: onUserMessageCallback and beforeRunCallback).
const { activeSpanContext } = require('../lib/tracing/active_parent.js')
const CALLS = 1_000_000
function perCall() {
  const t0 = process.hrtime.bigint()
  let found = 0
  for (let i = 0; i < CALLS; i++) if (activeSpanContext() !== undefined) found++
  return [Number(process.hrtime.bigint() - t0) / CALLS, found]
}
const lookups = { none: [], inSpan: [] }
for (let r = 0; r < 7; r++) {
  lookups.none.push(perCall()[0])
  lookups.inSpan.push(context.with(serviceContext(r), () => perCall()[0]))
}
console.log(`activeSpanContext(): ${median(lookups.none).toFixed(0)} ns outside any span, ${median(lookups.inSpan).toFixed(0)} ns inside one (median of 7 x ${CALLS} calls)`)
