// Export pipeline benchmark: what tracing with OTLP export adds to an ADK run.
//
//   node --expose-gc bench/export_pipeline.bench.mjs        (or: npm run bench -- export)
//   BENCH_INVOCATIONS=1000 node bench/export_pipeline.bench.mjs   quick check
//
// One process, side by side: scripted InMemoryRunner invocations (5 spans each:
// root, agent, chat, execute_tool, chat) run
//   untraced     no tracing plugin
//   otel-js      bench/baselines/otel_js_pipeline.mjs (the Weave-style OTel JS SDK plugin + OTLP proto exporter)
//   native       our TracingPlugin({ exporter: 'otlp', endpoint }): plain bodies,
//                as its default is to a collector on this machine
//   native-gzip  the same with OTEL_EXPORTER_OTLP_COMPRESSION=gzip (its default
//                to a remote collector), to show what gzip costs over loopback
//   noop-js      a plugin that does nothing (BasePlugin's own callbacks): what
//                ADK spends on any plugin's callbacks, which no tracer can
//                take away, and a gauge of the run's noise (it should read
//                about zero; on a busy 2-core machine two runs read -24
//                and +69 µs a run)
// exporting over loopback to an OTLP receiver in ANOTHER process (so decoding
// costs this process nothing). The variants alternate in rounds; each traced
// segment ends with forceFlush() (timed) and is checked against the receiver:
// every span must arrive, once. Reported per invocation: wall time and process
// CPU (all threads, so the native exporter thread counts; its own share is
// shown too, Linux only), each minus untraced:
// as totals over all rounds, and as the median over rounds of the difference
// to the untraced segment of the same round (robust to a noisy shared machine).
//
// Both plugins get the same batch options. maxQueueSize defaults to the spans of
// one segment, so neither may drop: with the OTel JS default (2048) the
// comparator's BatchSpanProcessor drops most spans under this load (37,200 of
// 50,000 in one run), which would make it look cheaper than it is.
//
// Env: BENCH_INVOCATIONS (10000), BENCH_ROUNDS (20), BENCH_WARMUP (per variant, 300),
//      BENCH_QUEUE (maxQueueSize for both plugins; e.g. 2048 to see the defaults' drops).
import { createRequire } from 'node:module'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { weatherRun, weatherRunner } from './helpers/weather_runner.mjs'
import { OtelJsPipelinePlugin } from './baselines/otel_js_pipeline.mjs'
import { startReceiverProcess } from './helpers/receiver_client.mjs'
import { NoopPlugin } from './helpers/noop_plugin.mjs'

const require = createRequire(import.meta.url)
const N = Number(process.env.BENCH_INVOCATIONS ?? 10_000)
const ROUNDS = Math.max(1, Math.min(N, Number(process.env.BENCH_ROUNDS ?? 20)))
const WARMUP = Number(process.env.BENCH_WARMUP ?? Math.min(300, N))
const QUEUE = process.env.BENCH_QUEUE
  ? Number(process.env.BENCH_QUEUE)
  : Math.max(2048, Math.ceil(N / ROUNDS) * 5, WARMUP * 5)
const SPANS_PER_INVOCATION = 5
const APP = 'export_bench'

const gc = globalThis.gc ?? (() => {})

/** CPU µs so far of this process's threads named `name` (Linux; 0 elsewhere). */
function threadCpuUs(name) {
  if (!existsSync('/proc/self/task')) return 0
  let us = 0
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== name) continue
      us += Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1000
    } catch {
      // The thread ended meanwhile.
    }
  }
  return us
}
const us = (ns, n) => Number(ns) / 1000 / n
const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a')
function median(xs) {
  const a = [...xs].sort((x, y) => x - y)
  const m = a.length >> 1
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2
}
/** Median over rounds of (v − untraced) for one per-round measure. */
const medianAdded = (v, base, key) => median(v.rounds.map((r, i) => r[key] - base.rounds[i][key]))

function makeVariant(name, plugin, spansPerInvocation = plugin ? SPANS_PER_INVOCATION : 0) {
  const { llm, runner } = weatherRunner(APP, plugin)
  return { name, plugin, spansPerInvocation, llm, runner, wallNs: 0n, flushNs: 0n, cpuUs: 0, exporterUs: 0, runs: 0, expected: 0, received: 0, duplicates: 0, non2xx: 0, rounds: [] }
}

const invoke = (v, i) => weatherRun(v, APP, i)

/** Runs `count` invocations of v, flushes, and checks the receiver got all the spans. */
async function segment(v, count, rx, { measure }) {
  await rx.reset()
  gc()
  const cpu0 = process.cpuUsage()
  const x0 = threadCpuUs('adk-otlp-export')
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < count; i++) await invoke(v, i)
  const t1 = process.hrtime.bigint()
  if (v.spansPerInvocation) await v.plugin.forceFlush()
  const t2 = process.hrtime.bigint()
  const cpu = process.cpuUsage(cpu0)
  const exporterUs = threadCpuUs('adk-otlp-export') - x0
  const expected = count * v.spansPerInvocation
  const s = await rx.waitForSpans(expected, 30_000)
  if (measure) {
    v.rounds.push({ wallUs: us(t1 - t0, count), wallFlushUs: us(t2 - t0, count), cpuUs: (cpu.user + cpu.system) / count })
    v.wallNs += t1 - t0
    v.flushNs += t2 - t1
    v.cpuUs += cpu.user + cpu.system
    v.exporterUs += exporterUs
    v.runs += count
    v.expected += expected
    v.received += s.spansAccepted
    v.duplicates += s.duplicates
    v.non2xx += s.requests - (s.answers['200'] ?? 0)
  }
  return s
}

/** Our plugin with OTLP export, or null with the reason it is not usable yet.
 * `compression`: OTEL_EXPORTER_OTLP_COMPRESSION while it is made (read then). */
async function nativeVariant(rx, name = 'native', compression = undefined) {
  let TracingPlugin
  try {
    ;({ TracingPlugin } = require('../index.js'))
  } catch (err) {
    return { skip: `cannot load the package (${err.message.split('\n')[0]}); run npm run build` }
  }
  let plugin
  const before = process.env.OTEL_EXPORTER_OTLP_COMPRESSION
  try {
    if (compression !== undefined) process.env.OTEL_EXPORTER_OTLP_COMPRESSION = compression
    plugin = new TracingPlugin({
      exporter: 'otlp',
      endpoint: rx.endpoint,
      serviceName: 'adk-bench',
      batch: { maxQueueSize: QUEUE },
    })
  } catch (err) {
    return { skip: `TracingPlugin rejected the otlp options (${err.message})` }
  } finally {
    if (before === undefined) delete process.env.OTEL_EXPORTER_OTLP_COMPRESSION
    else process.env.OTEL_EXPORTER_OTLP_COMPRESSION = before
  }
  if (typeof plugin.forceFlush !== 'function') {
    return { skip: 'TracingPlugin has no forceFlush(): OTLP export is not in this build yet' }
  }
  const v = makeVariant(name, plugin)
  try {
    const s = await segment(v, 1, rx, { measure: false })
    if (s.spansAccepted < SPANS_PER_INVOCATION) {
      return { skip: `one probe invocation delivered ${s.spansAccepted} of ${SPANS_PER_INVOCATION} spans to the receiver: OTLP export not working in this build` }
    }
  } catch (err) {
    return { skip: `probe invocation failed: ${err.message}` }
  }
  return { variant: v }
}


async function main() {
  const rx = await startReceiverProcess()
  const variants = [makeVariant('untraced', null), makeVariant('noop-js', new NoopPlugin(), 0)]
  variants.push(
    makeVariant('otel-js', new OtelJsPipelinePlugin({ endpoint: rx.endpoint, serviceName: 'adk-bench', batch: { maxQueueSize: QUEUE } })),
  )
  const native = await nativeVariant(rx)
  if (native.variant) variants.push(native.variant)
  else console.log(`native TracingPlugin SKIPPED: ${native.skip}`)
  // Beside it, the same plugin told to gzip: only while the environment
  // leaves compression to the default ('native' shows any setting it asks for).
  const gzipped = native.variant && process.env.OTEL_EXPORTER_OTLP_COMPRESSION === undefined ? await nativeVariant(rx, 'native-gzip', 'gzip') : undefined
  if (gzipped?.variant) variants.push(gzipped.variant)

  console.log(`export pipeline: ${N} invocations x ${variants.length} variants, ${ROUNDS} rounds, warm-up ${WARMUP}, maxQueueSize ${QUEUE}, ` +
    `receiver pid ${rx.pid} at ${rx.endpoint}, node ${process.version}${globalThis.gc ? '' : ' (no --expose-gc)'}`)

  for (const v of variants) await segment(v, WARMUP, rx, { measure: false })

  const perRound = Math.floor(N / ROUNDS)
  for (let r = 0; r < ROUNDS; r++) {
    const count = r === ROUNDS - 1 ? N - perRound * (ROUNDS - 1) : perRound
    // Rotate the order so no variant always runs first (or right after a flush).
    const order = variants.map((_, i) => variants[(i + r) % variants.length])
    for (const v of order) await segment(v, count, rx, { measure: true })
  }

  const base = variants[0]
  const baseWall = us(base.wallNs, base.runs)
  const baseCpu = base.cpuUs / base.runs
  const rows = variants.map((v) => {
    const wall = us(v.wallNs, v.runs)
    const wallFlush = us(v.wallNs + v.flushNs, v.runs)
    const cpu = v.cpuUs / v.runs
    return {
      variant: v.name,
      invocations: v.runs,
      'wall µs/inv': fmt(wall),
      'added wall µs': v === base ? '-' : fmt(wall - baseWall),
      'added wall+flush µs': v === base ? '-' : fmt(wallFlush - baseWall),
      'cpu µs/inv': fmt(cpu),
      'added cpu µs': v === base ? '-' : fmt(cpu - baseCpu),
      'median added wall µs': v === base ? '-' : fmt(medianAdded(v, base, 'wallUs')),
      'median added cpu µs': v === base ? '-' : fmt(medianAdded(v, base, 'cpuUs')),
      'of which exporter thread µs': v.name.startsWith('native') ? fmt(v.exporterUs / v.runs) : '-',
      'spans expected': v.expected,
      'spans received': v.received,
      dropped: v.expected - v.received,
      duplicates: v.duplicates,
      'non-2xx': v.non2xx,
      ...(typeof v.plugin?.droppedSpanCount === 'number' ? { droppedSpanCount: v.plugin.droppedSpanCount } : {}),
    }
  })
  console.table(rows)

  const js = variants.find((v) => v.name === 'otel-js')
  const nat = variants.find((v) => v.name === 'native')
  const noop = variants.find((v) => v.name === 'noop-js')
  const summary = {
    invocations: N,
    untracedWallUs: baseWall,
    untracedCpuUs: baseCpu,
    otelJsAddedWallUs: us(js.wallNs, js.runs) - baseWall,
    otelJsAddedCpuUs: js.cpuUs / js.runs - baseCpu,
    otelJsMedianAddedWallUs: medianAdded(js, base, 'wallUs'),
    otelJsMedianAddedCpuUs: medianAdded(js, base, 'cpuUs'),
    noopMedianAddedWallUs: medianAdded(noop, base, 'wallUs'),
    noopMedianAddedCpuUs: medianAdded(noop, base, 'cpuUs'),
  }
  // The targets (wall 0.15x, CPU 0.2x of what the JS pipeline adds)
  // as time a run, beside what a plugin that does nothing already takes.
  console.log(`a plugin that does nothing adds (medians over rounds) wall ${fmt(summary.noopMedianAddedWallUs)} µs, cpu ${fmt(summary.noopMedianAddedCpuUs)} µs a run; ` +
    `0.15x of otel-js's added wall is ${fmt(0.15 * summary.otelJsMedianAddedWallUs)} µs, 0.2x of its cpu ${fmt(0.2 * summary.otelJsMedianAddedCpuUs)} µs`)
  if (nat) {
    summary.nativeAddedWallUs = us(nat.wallNs, nat.runs) - baseWall
    summary.nativeAddedCpuUs = nat.cpuUs / nat.runs - baseCpu
    summary.nativeMedianAddedWallUs = medianAdded(nat, base, 'wallUs')
    summary.nativeMedianAddedCpuUs = medianAdded(nat, base, 'cpuUs')
    summary.nativeExporterThreadCpuUs = nat.exporterUs / nat.runs
    summary.ratioWall = summary.nativeAddedWallUs / summary.otelJsAddedWallUs
    summary.ratioCpu = summary.nativeAddedCpuUs / summary.otelJsAddedCpuUs
    summary.medianRatioWall = medianAdded(nat, base, 'wallUs') / medianAdded(js, base, 'wallUs')
    summary.medianRatioWallFlush = medianAdded(nat, base, 'wallFlushUs') / medianAdded(js, base, 'wallFlushUs')
    summary.medianRatioCpu = medianAdded(nat, base, 'cpuUs') / medianAdded(js, base, 'cpuUs')
    console.log(`native / otel-js added per invocation: wall ${fmt(summary.ratioWall, 3)}x, cpu ${fmt(summary.ratioCpu, 3)}x (totals); ` +
      `medians over rounds: wall ${fmt(summary.medianRatioWall, 3)}x, wall+flush ${fmt(summary.medianRatioWallFlush, 3)}x, cpu ${fmt(summary.medianRatioCpu, 3)}x`)
    const gz = variants.find((v) => v.name === 'native-gzip')
    if (gz) {
      summary.gzipMedianAddedCpuUs = medianAdded(gz, base, 'cpuUs')
      summary.gzipExporterThreadCpuUs = gz.exporterUs / gz.runs
      summary.gzipMedianRatioCpu = medianAdded(gz, base, 'cpuUs') / medianAdded(js, base, 'cpuUs')
      console.log(`native-gzip / otel-js, medians over rounds: cpu ${fmt(summary.gzipMedianRatioCpu, 3)}x; ` +
        `exporter thread ${fmt(summary.gzipExporterThreadCpuUs)} µs/inv gzipped vs ${fmt(summary.nativeExporterThreadCpuUs)} plain`)
    }
  } else {
    console.log(`native / otel-js: n/a (native skipped: ${native.skip})`)
  }
  console.log(`summary ${JSON.stringify(summary)}`)

  for (const v of variants) if (v.plugin) await v.plugin.shutdown?.()
  await rx.stop()

  // A lost or duplicated span is a failure of the run, not a figure to report quietly.
  const bad = variants.filter((v) => v.spansPerInvocation && (v.received !== v.expected || v.duplicates))
  if (bad.length) {
    console.log(`FAILED: spans lost or duplicated for ${bad.map((v) => v.name).join(', ')}`)
    process.exitCode = 1
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
