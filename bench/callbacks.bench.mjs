// `npm run bench -- callbacks`: what the callbacks a plugin does not use cost
// ADK, which awaits all 17 callbacks of every plugin. For both plugins, each
// unused callback's awaited call beside the same call on a plain JavaScript
// BasePlugin subclass whose callbacks do nothing (target: at most 1.5x).
// Interleaved rounds in one process, rotating order; medians.
import { LogLevel, setLogLevel } from '@google/adk'
import { createRequire } from 'node:module'
import { ReflectAndRetryToolPlugin, TracingPlugin } from '../index.js'
import { NoopPlugin } from './helpers/noop_plugin.mjs'

const require = createRequire(import.meta.url)
const { CALLBACK_NAMES, pass } = require('../lib/plugin_shell.js')

setLogLevel(LogLevel.ERROR)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11)
const CALLS = Number(process.env.BENCH_CALLS ?? 50000)

async function timeCalls(fn, calls) {
  const start = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) await fn()
  return Number(process.hrtime.bigint() - start) / calls
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

async function compare(variants) {
  const samples = variants.map(() => [])
  for (const fn of variants) await timeCalls(fn, CALLS)
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < variants.length; k++) {
      const v = (r + k) % variants.length
      samples[v].push(await timeCalls(variants[v], CALLS))
    }
  }
  return samples.map(median)
}

const noop = new NoopPlugin()
const params = {}
console.log(`node ${process.version}, ${ROUNDS} interleaved rounds x ${CALLS} awaited calls, median ns per call`)
for (const plugin of [new ReflectAndRetryToolPlugin(), new TracingPlugin({ exporter: 'none' })]) {
  const unused = CALLBACK_NAMES.filter((name) => plugin[name] === pass)
  console.log(`\n${plugin.constructor.name}: ${unused.length} unused callbacks`)
  console.log(`${'callback'.padEnd(26)}${'plugin'.padStart(9)}${'js no-op'.padStart(10)}${'ratio'.padStart(8)}`)
  let worst = 0
  for (const name of unused) {
    const [ours, js] = await compare([() => plugin[name](params), () => noop[name](params)])
    worst = Math.max(worst, ours / js)
    console.log(`${name.padEnd(26)}${ours.toFixed(1).padStart(9)}${js.toFixed(1).padStart(10)}${(ours / js).toFixed(2).padStart(7)}x`)
  }
  console.log(`worst unused callback: ${worst.toFixed(2)}x the plain JS no-op (target <= 1.5x)`)
}
