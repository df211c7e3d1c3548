// `npm run bench -- tracing_parts`: where the time of one traced invocation
// goes, on the JavaScript thread. The yardstick's S1 lifecycle (all 17
// callbacks, 32 awaited calls on real ADK contexts, events and requests)
// through: a plain JavaScript no-op plugin; TracingPlugin with its
// hand-over to the tracing thread made a no-op (its JavaScript alone:
// reading ADK's objects, JSON, writing records); the whole plugin. Each
// with content capture on (the default) and off. Then the same split in
// whole InMemoryRunner runs (wall time and process CPU, which counts the
// tracing thread), and what one hand-over costs. Exporter 'none': the
// export is measured by export_pipeline. Interleaved rounds in one
// process; medians.
import { Context, FunctionTool, InvocationContext, LlmAgent, LogLevel, PluginManager, createEvent, setLogLevel } from '@google/adk'
import { createRequire } from 'node:module'
import { TracingPlugin } from '../index.js'
import { NoopPlugin } from './helpers/noop_plugin.mjs'
import { stubNativeCalls } from './helpers/native_stub.mjs'
import { weatherRun, weatherRunner } from './helpers/weather_runner.mjs'

const require = createRequire(import.meta.url)
const native = require('../binding.js')

setLogLevel(LogLevel.ERROR)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15)
const LIFECYCLES = Number(process.env.BENCH_LIFECYCLES ?? 300)
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

const tool = new FunctionTool({ name: 'get_weather', description: 'Weather of a city.', execute: async () => ({}) })
const agent = new LlmAgent({ name: 'weather_agent', description: 'Answers weather questions.', model: 'gemini-2.5-flash', tools: [tool] })
const result = { city: 'Lyon', weather: 'sunny', temperature_c: 21, forecast: [{ day: 'tomorrow', weather: 'cloudy' }] }
const history = [
  { role: 'user', parts: [{ text: 'Hi! I am planning a weekend trip. What is the weather in Paris right now?' }] },
  { role: 'model', parts: [{ functionCall: { id: 'fc-a1', name: 'get_weather', args: { city: 'Paris' } } }] },
  { role: 'user', parts: [{ functionResponse: { id: 'fc-a1', name: 'get_weather', response: result } }] },
  { role: 'model', parts: [{ text: 'It is sunny in Paris, 21°C, with clouds expected tomorrow.' }] },
  { role: 'user', parts: [{ text: 'And in Lyon?' }] },
]
const request = () => ({
  model: 'gemini-2.5-flash',
  contents: history,
  config: {
    systemInstruction: 'You are a helpful weather assistant. Use the get_weather tool, then answer in one sentence.',
    temperature: 0.2,
    maxOutputTokens: 1024,
    tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather of a city.', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] } }] }],
  },
  toolsDict: { get_weather: tool },
})
const usage = { promptTokenCount: 812, candidatesTokenCount: 18, totalTokenCount: 830 }
const callContent = { role: 'model', parts: [{ functionCall: { id: 'fc-x', name: 'get_weather', args: { city: 'Lyon' } } }] }
const textContent = { role: 'model', parts: [{ text: 'It is sunny in Lyon, 23°C.' }] }
const session = { id: 'sess-1', appName: 'app', userId: 'u', state: {}, events: [], lastUpdateTime: 0 }
const userContent = { role: 'user', parts: [{ text: 'And in Lyon?' }] }
const pluginManager = new PluginManager([])
let seq = 0

async function lifecycle(p) {
  const invocationId = `e-${++seq}`
  const ic = new InvocationContext({ invocationId, agent, session, userContent, pluginManager, runConfig: {} })
  const cc = new Context({ invocationContext: ic })
  const tc1 = new Context({ invocationContext: ic, functionCallId: `fc-${seq}-1` })
  const tc2 = new Context({ invocationContext: ic, functionCallId: `fc-${seq}-2` })
  const event = (content, extra = {}) => createEvent({ invocationId, author: 'weather_agent', content, ...extra })
  const args = { city: 'Lyon' }
  const error = new Error('upstream timed out')
  await p.onUserMessageCallback({ invocationContext: ic, userMessage: userContent })
  await p.beforeRunCallback({ invocationContext: ic })
  await p.beforeAgentCallback({ agent, callbackContext: cc })
  await p.beforeToolSelection({ callbackContext: cc, tools: {} })
  await p.beforeModelCallback({ callbackContext: cc, llmRequest: request() })
  await p.afterModelCallback({ callbackContext: cc, llmResponse: { content: callContent, usageMetadata: usage, finishReason: 'STOP' } })
  await p.onEventCallback({ invocationContext: ic, event: event(callContent) })
  await p.beforeToolCallback({ tool, toolArgs: args, toolContext: tc1 })
  await p.onToolErrorCallback({ tool, toolArgs: args, toolContext: tc1, error })
  await p.afterToolCallback({ tool, toolArgs: args, toolContext: tc1, result: { error: error.message } })
  await p.onEventCallback({ invocationContext: ic, event: event({ role: 'user', parts: [{ functionResponse: { id: tc1.functionCallId, name: 'get_weather', response: { error: error.message } } }] }) })
  await p.beforeModelCallback({ callbackContext: cc, llmRequest: request() })
  await p.afterModelCallback({ callbackContext: cc, llmResponse: { content: callContent, usageMetadata: usage, finishReason: 'STOP' } })
  await p.onEventCallback({ invocationContext: ic, event: event(callContent) })
  await p.beforeToolCallback({ tool, toolArgs: args, toolContext: tc2 })
  await p.afterToolCallback({ tool, toolArgs: args, toolContext: tc2, result })
  await p.onEventCallback({ invocationContext: ic, event: event({ role: 'user', parts: [{ functionResponse: { id: tc2.functionCallId, name: 'get_weather', response: result } }] }) })
  const failing = request()
  await p.beforeModelCallback({ callbackContext: cc, llmRequest: failing })
  await p.onModelErrorCallback({ callbackContext: cc, llmRequest: failing, error })
  await p.onEventCallback({ invocationContext: ic, event: event(undefined, { errorCode: 'UNKNOWN_ERROR', errorMessage: error.message }) })
  await p.beforeModelCallback({ callbackContext: cc, llmRequest: request() })
  await p.afterModelCallback({ callbackContext: cc, llmResponse: { content: textContent, usageMetadata: usage, finishReason: 'STOP' } })
  await p.onEventCallback({ invocationContext: ic, event: event(textContent) })
  await p.beforeContextCompaction({ invocationContext: ic, trigger: 'Auto' })
  await p.afterContextCompaction({ invocationContext: ic, trigger: 'Auto' })
  await p.afterAgentCallback({ agent, callbackContext: cc })
  await p.afterRunCallback({ invocationContext: ic })
}

/** TracingPlugin, whole or (`jsOnly`) with its hand-over stubbed. */
function tracing(captureContent, jsOnly = false) {
  const plugin = new TracingPlugin({ exporter: 'none', captureContent })
  return jsOnly ? stubNativeCalls(plugin) : plugin
}

const variants = {
  'no-op JS plugin': new NoopPlugin(),
  'JS only, capture on': tracing(true, true),
  'whole plugin, capture on': tracing(true),
  'JS only, capture off': tracing(false, true),
  'whole plugin, capture off': tracing(false),
}
const names = Object.keys(variants)
const samples = Object.fromEntries(names.map((n) => [n, []]))
for (let r = -2; r < ROUNDS; r++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + r + names.length) % names.length]
    const start = process.hrtime.bigint()
    for (let i = 0; i < LIFECYCLES; i++) await lifecycle(variants[name])
    if (r >= 0) samples[name].push(Number(process.hrtime.bigint() - start) / 1000 / LIFECYCLES)
  }
}
console.log(`node ${process.version}, ${ROUNDS} interleaved rounds x ${LIFECYCLES} lifecycles (32 awaited calls, all 17 callbacks), median µs per lifecycle`)
const base = median(samples[names[0]])
for (const n of names) console.log(`${n.padEnd(32)}${median(samples[n]).toFixed(1).padStart(8)}${(median(samples[n]) / base).toFixed(2).padStart(8)}x no-op`)

// The same split in whole InMemoryRunner runs (a scripted model turn calling
// a tool, then an answer; a fresh session per run).
const RUNS = Number(process.env.BENCH_RUNS ?? 200)
const runVariants = {
  'no plugin': undefined,
  'no-op JS plugin': new NoopPlugin(),
  'JS only, capture on': tracing(true, true),
  'whole plugin, capture on': tracing(true),
}
const runNames = Object.keys(runVariants)
const runners = Object.fromEntries(runNames.map((n) => [n, weatherRunner('parts', runVariants[n])]))
const runOnce = (v, i) => weatherRun(v, 'parts', i)
const added = Object.fromEntries(runNames.map((n) => [n, []]))
const wallAdded = Object.fromEntries(runNames.map((n) => [n, []]))
for (let r = -2; r < ROUNDS; r++) {
  const round = {}
  const wall = {}
  for (let k = 0; k < runNames.length; k++) {
    const name = runNames[(k + r + runNames.length) % runNames.length]
    const cpu0 = process.cpuUsage()
    const start = process.hrtime.bigint()
    for (let i = 0; i < RUNS; i++) await runOnce(runners[name], i)
    wall[name] = Number(process.hrtime.bigint() - start) / 1000 / RUNS
    const cpu = process.cpuUsage(cpu0)
    round[name] = (cpu.user + cpu.system) / RUNS
  }
  if (r >= 0) {
    for (const n of runNames) {
      added[n].push(round[n] - round['no plugin'])
      wallAdded[n].push(wall[n] - wall['no plugin'])
    }
  }
}
console.log(`\nInMemoryRunner runs (${ROUNDS} interleaved rounds x ${RUNS} runs, 5 spans each), median µs added per run vs no plugin`)
console.log(`${''.padEnd(32)}${'wall'.padStart(8)}${'CPU'.padStart(8)}`)
for (const n of runNames.slice(1)) console.log(`${n.padEnd(32)}${median(wallAdded[n]).toFixed(1).padStart(8)}${median(added[n]).toFixed(1).padStart(8)}`)

// One hand-over: a lifecycle's records (one batch) given to the tracing
// thread, timed on this thread; the tracing thread catches up between
// groups (not timed).
const t = new TracingPlugin({ exporter: 'none' })
const batches = []
t._n = { tracerApply: (h, nums, n, text, big, now) => (batches.push([nums.slice(0, n), n, text, big]), 0) }
await lifecycle(t)
t._flush() // the records of a run go within a few ms; now
const tracer = new native.NativeTracer({ exporter: 'none' }, () => {})
const times = []
for (let group = 0; group < 40; group++) {
  for (let i = 0; i < 50; i++) {
    const [nums, n, text, big] = batches[0]
    const start = process.hrtime.bigint()
    native.tracerApply(tracer.handle, nums, n, text, big, performance.now())
    times.push(Number(process.hrtime.bigint() - start) / 1000)
  }
  void tracer.openInvocationCount // waits for the tracing thread
}
const [batch] = batches
console.log(
  `\none hand-over of a lifecycle's records (${batch[1]} numbers, ${batch[2].length} characters, ${batch[3]?.length ?? 0} long strings): median ${median(times).toFixed(1)} µs on this thread`,
)
