// Where the CPU of tracing goes, per thread: the main (JavaScript) thread,
// the tracing thread that runs the span model (adk-tracing), V8's helper
// threads (GC), and the OTLP exporter thread (adk-otlp-export).
// Linux only (reads /proc/self/task/*/schedstat, nanosecond run times).
//
//   node --expose-gc bench/tracing_threads.bench.mjs      (or: npm run bench -- tracing_threads)
//   BENCH_INVOCATIONS=3000 BENCH_ROUNDS=2 BENCH_VARIANTS=untraced,none,memory,otlp,glue ...
//
// Variants run the export pipeline benchmark's scripted invocation (5 spans)
// in alternating blocks: untraced, a plugin that overrides nothing (noop: what
// ADK's plugin dispatch costs any plugin), TracingPlugin with exporter none / memory /
// otlp (receiver in another process), and `glue`: exporter none with the
// hand-over of the callbacks' records replaced by a no-op (what the
// JavaScript shell costs without any call into Rust). BENCH_TIME_CALLBACKS=1 also
// prints the time spent inside each plugin callback (hrtime around it).
// Ends with the idle check: the exporter thread's CPU over 2 s with nothing to do.
import { createRequire } from 'node:module'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { weatherRun, weatherRunner } from './helpers/weather_runner.mjs'
import { startReceiverProcess } from './helpers/receiver_client.mjs'
import { stubNativeCalls } from './helpers/native_stub.mjs'
import { NoopPlugin } from './helpers/noop_plugin.mjs'

const require = createRequire(import.meta.url)
const { TracingPlugin } = require('../index.js')
const N = Number(process.env.BENCH_INVOCATIONS ?? 3000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const WARMUP = 300
const VARIANTS = (process.env.BENCH_VARIANTS ?? 'untraced,noop,none,memory,otlp,glue').split(',')
const APP = 'threads_bench'
const gc = globalThis.gc ?? (() => {})

/** Run time in µs of every thread of this process, by "name:tid". */
function threadTimes() {
  const out = {}
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      out[`${name}:${tid}`] = ns / 1000
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out
}

const group = (key) => {
  const [name, tid] = key.split(':')
  if (tid === String(process.pid)) return 'main'
  if (name === 'adk-tracing') return 'tracing'
  return name === 'adk-otlp-export' ? 'exporter' : 'other (V8, libuv)'
}

function makeRunner(plugin) {
  return { plugin, ...weatherRunner(APP, plugin) }
}

const invoke = (v, i) => weatherRun(v, APP, i)

const PLUGIN_CALLBACKS = ['onUserMessageCallback', 'beforeRunCallback', 'onEventCallback', 'beforeModelCallback', 'afterModelCallback', 'beforeToolCallback', 'afterToolCallback', 'afterRunCallback']

function makePlugin(name, endpoint) {
  if (name === 'untraced') return null
  if (name === 'noop') return new NoopPlugin()
  const exporter = name === 'glue' ? 'none' : name
  const plugin = new TracingPlugin({ exporter, endpoint: exporter === 'otlp' ? endpoint : undefined, batch: exporter === 'otlp' ? { maxQueueSize: N * 5 } : undefined })
  if (name === 'glue') {
    // The JavaScript side alone: the records' hand-over a no-op.
    stubNativeCalls(plugin)
    plugin._native.takeWarnings = () => undefined
  }
  return plugin
}

const timing = {}
function timeCallbacks(name, plugin) {
  for (const m of PLUGIN_CALLBACKS) {
    const original = plugin[m].bind(plugin)
    const key = `${name} ${m}`
    plugin[m] = (params) => {
      const t0 = process.hrtime.bigint()
      const r = original(params)
      timing[key] = (timing[key] ?? 0n) + (process.hrtime.bigint() - t0)
      return r
    }
  }
}

if (!existsSync('/proc/self/task')) {
  console.log('tracing_threads: needs Linux /proc; skipped')
  process.exit(0)
}
const rx = await startReceiverProcess()
const variants = VARIANTS.map((name) => ({ name, ...makeRunner(makePlugin(name, rx.endpoint)), wall: 0, cpu: 0, threads: {} }))
if (process.env.BENCH_TIME_CALLBACKS) for (const v of variants) if (v.plugin) timeCallbacks(v.name, v.plugin)
for (const v of variants) for (let i = 0; i < WARMUP; i++) await invoke(v, i)
for (const k of Object.keys(timing)) timing[k] = 0n

for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < variants.length; k++) {
    const v = variants[(r + k) % variants.length]
    gc()
    const t0 = threadTimes()
    const c0 = process.cpuUsage()
    const w0 = process.hrtime.bigint()
    for (let i = 0; i < N; i++) await invoke(v, i)
    await v.plugin?.forceFlush?.()
    v.wall += Number(process.hrtime.bigint() - w0) / 1000 / N / ROUNDS
    const c = process.cpuUsage(c0)
    v.cpu += (c.user + c.system) / N / ROUNDS
    const t1 = threadTimes()
    for (const key of Object.keys(t1)) {
      const g = group(key)
      v.threads[g] = (v.threads[g] ?? 0) + (t1[key] - (t0[key] ?? 0)) / N / ROUNDS
    }
  }
}

console.log(`tracing_threads: ${N} invocations x ${ROUNDS} rounds per variant (5 spans each), node ${process.version}`)
const base = variants.find((v) => v.name === 'untraced')
console.table(
  variants.map((v) => ({
    variant: v.name,
    'wall µs/inv': v.wall.toFixed(1),
    'cpu µs/inv': v.cpu.toFixed(1),
    'added cpu µs': base && v !== base ? (v.cpu - base.cpu).toFixed(1) : '-',
    'main µs': (v.threads.main ?? 0).toFixed(1),
    'added main µs': base && v !== base ? ((v.threads.main ?? 0) - (base.threads.main ?? 0)).toFixed(1) : '-',
    'tracing µs': (v.threads.tracing ?? 0).toFixed(1),
    'exporter µs': (v.threads.exporter ?? 0).toFixed(1),
    'other threads µs': (v.threads['other (V8, libuv)'] ?? 0).toFixed(1),
  })),
)
if (process.env.BENCH_TIME_CALLBACKS) {
  const runs = N * ROUNDS
  for (const [k, ns] of Object.entries(timing)) console.log(`${k.padEnd(40)} ${(Number(ns) / 1000 / runs).toFixed(2)} µs/inv`)
}

// Idle: after a flush, the exporter thread must not run at all.
const otlp = variants.find((v) => v.name === 'otlp')
if (otlp) {
  await otlp.plugin.forceFlush()
  await sleep(200)
  const exporterTime = () => Object.entries(threadTimes()).filter(([k]) => group(k) === 'exporter').reduce((a, [, t]) => a + t, 0)
  const before = exporterTime()
  await sleep(2000)
  console.log(`idle exporter thread: ${(exporterTime() - before).toFixed(1)} µs of CPU over 2 s`)
}
for (const v of variants) await v.plugin?.shutdown?.()
await rx.stop()
