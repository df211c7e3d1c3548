// What the JavaScript thread spends a traced run on, function by function:
// the export benchmarks' scripted invocation (5 spans) untraced and with
// TracingPlugin exporting over OTLP (receiver in another process), in
// alternating blocks, each block under V8's sampling profiler (node:inspector,
// in this process). Prints the self time per run of each group of code (this
// package, ADK, other dependencies, Node's own, GC) in both variants, and this
// package's functions that take the most.
//
// The profiler's samples are wall time: while the thread waits for a core
// (the tracing and exporter threads and the receiver share the machine's),
// the wait counts to the code it waits in. So the groups' added times move
// from run to run on a busy 2-core machine, more than the ranking of this
// package's functions does; BENCH_EXPORTER=none leaves out the exporter
// and the receiver. No forced GC between blocks: it throws away optimised
// code, and the traced blocks then read about half again slower.
//
// A callback TurboFan inlines into ADK's code counts as ADK's: a stand-in
// plugin whose callbacks only spin (BENCH_STANDIN=spin puts it in the
// traced variant's place) added 175-207 µs a run to ADK's group and 28-41
// to its own in three runs; with inlining off, -34 and +8 to ADK's and +84
// and +87 to its own in two. So ADK's added time here is partly this
// package's own work; BENCH_INLINING=off (V8's --no-turbo-inlining, set
// before any code is optimised) keeps each function's time its own, in
// code that runs slower as a whole.
//
//   node bench/tracing_profile.bench.mjs      (or: npm run bench -- tracing_profile)
//   BENCH_INVOCATIONS=3000 BENCH_ROUNDS=2 BENCH_TOP=15 BENCH_EXPORTER=otlp|none BENCH_INLINING=off BENCH_STANDIN=spin ...
import { createRequire } from 'node:module'
import { Session } from 'node:inspector'
import { setFlagsFromString } from 'node:v8'
import { dirname, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BasePlugin } from '@google/adk'
import { weatherRun, weatherRunner } from './helpers/weather_runner.mjs'
import { startReceiverProcess } from './helpers/receiver_client.mjs'

const require = createRequire(import.meta.url)
const INLINING = process.env.BENCH_INLINING ?? 'on'
const STANDIN = process.env.BENCH_STANDIN === 'spin'
// Read by TurboFan as it optimises, so it applies to everything optimised from here on.
if (INLINING === 'off') setFlagsFromString('--no-turbo-inlining')
const { TracingPlugin } = require('../index.js')
const N = Number(process.env.BENCH_INVOCATIONS ?? 3000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const TOP = Number(process.env.BENCH_TOP ?? 12)
const WARMUP = 300
const EXPORTER = process.env.BENCH_EXPORTER ?? 'otlp'
const APP = 'profile_bench'
const LIB = `${dirname(dirname(fileURLToPath(import.meta.url)))}${sep}lib${sep}`

const invoke = (v, i) => weatherRun(v, APP, i)

const session = new Session()
session.connect()
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))))

/** The group of code a profile node's function belongs to. */
function groupOf(frame) {
  const url = frame.url.startsWith('file://') ? fileURLToPath(frame.url) : frame.url
  if (url.startsWith(LIB)) return 'this package (with its native calls)'
  if (url.includes(`${sep}@google${sep}adk${sep}`)) return '@google/adk'
  if (url.includes(`${sep}node_modules${sep}`)) return 'other dependencies'
  if (frame.functionName === '(garbage collector)') return 'GC'
  if (frame.functionName === '(program)' || frame.functionName === '(idle)' || frame.functionName === '(root)') return 'V8 and idle'
  return url === '' || url.startsWith('node:') ? 'Node and builtins' : 'this benchmark'
}

/** Adds the self time (µs) of each sample to its group and, for this package, its function. */
function add(profile, groups, functions) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]))
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = nodes.get(profile.samples[i])
    const us = profile.timeDeltas[i + 1] ?? 0
    const group = groupOf(frame)
    groups[group] = (groups[group] ?? 0) + us
    if (group.startsWith('this package')) {
      const key = `${frame.functionName || '(anonymous)'} ${frame.url.slice(frame.url.lastIndexOf('lib/'))}:${frame.lineNumber + 1}`
      functions[key] = (functions[key] ?? 0) + us
    }
  }
}

const rx = EXPORTER === 'otlp' && !STANDIN ? await startReceiverProcess() : undefined
const options = rx ? { endpoint: rx.endpoint, batch: { maxQueueSize: N * 5 } } : { exporter: EXPORTER }
/** The stand-in: ten callbacks that spin and read nothing (about 7 µs a call with inlining off, on a 2-core VM; 12 calls a run). */
class SpinPlugin extends BasePlugin {
  constructor() {
    super('spin')
  }
}
let spun = 0
function spin() {
  let x = 1.0001
  for (let i = 0; i < 2000; i++) x = x * 1.0000001 + 0.5 / (i + 1)
  spun += x
}
for (const name of ['onUserMessageCallback', 'beforeRunCallback', 'onEventCallback', 'afterRunCallback', 'beforeAgentCallback', 'afterAgentCallback', 'beforeModelCallback', 'afterModelCallback', 'beforeToolCallback', 'afterToolCallback']) {
  SpinPlugin.prototype[name] = async function () {
    spin()
  }
}
const variants = ['untraced', 'traced'].map((name) => {
  const plugin = name !== 'traced' ? null : STANDIN ? new SpinPlugin() : new TracingPlugin(options)
  return { name, plugin, ...weatherRunner(APP, plugin), groups: {}, functions: {} }
})
for (const v of variants) for (let i = 0; i < WARMUP; i++) await invoke(v, i)
await post('Profiler.enable')
await post('Profiler.setSamplingInterval', { interval: 100 })
for (let r = 0; r < ROUNDS; r++) {
  for (const v of r % 2 ? [...variants].reverse() : variants) {
    await post('Profiler.start')
    for (let i = 0; i < N; i++) await invoke(v, i)
    const { profile } = await post('Profiler.stop')
    add(profile, v.groups, v.functions)
    await v.plugin?.forceFlush?.()
  }
}
await post('Profiler.disable')
session.disconnect()

const runs = N * ROUNDS
const [untraced, traced] = variants
console.log(`tracing_profile: ${N} invocations x ${ROUNDS} rounds per variant (${STANDIN ? 'the spinning stand-in in the traced variant' : `5 spans each, exporter ${EXPORTER}`}, inlining ${INLINING}), self time per run, node ${process.version}`)
const names = [...new Set([...Object.keys(traced.groups), ...Object.keys(untraced.groups)])].sort((a, b) => (traced.groups[b] ?? 0) - (untraced.groups[b] ?? 0) - ((traced.groups[a] ?? 0) - (untraced.groups[a] ?? 0)))
const perRun = (us) => ((us ?? 0) / runs).toFixed(1)
console.table(names.map((g) => ({ code: g, 'untraced µs': perRun(untraced.groups[g]), 'traced µs': perRun(traced.groups[g]), 'added µs': perRun((traced.groups[g] ?? 0) - (untraced.groups[g] ?? 0)) })))
const total = (v) => Object.values(v.groups).reduce((a, b) => a + b, 0)
console.log(`all: ${perRun(total(untraced))} µs untraced, ${perRun(total(traced))} µs traced a run`)
console.log(`this package's functions by self time (of ${perRun(traced.groups['this package (with its native calls)'])} µs a run):`)
for (const [k, us] of Object.entries(traced.functions).sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`  ${perRun(us).padStart(6)} µs  ${k}`)
for (const v of variants) await v.plugin?.shutdown?.()
if (STANDIN && spun === 0) console.log('(the stand-in never ran)')
await rx?.stop()
