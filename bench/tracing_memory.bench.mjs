// TracingPlugin memory stays bounded: 100,000 scripted invocations through a
// real InMemoryRunner, traced with exporter 'none'; one in ten is broken out
// of and finished with finishInterruptedInvocation. Expect
// openInvocationCount 0 at the end and RSS within 10% of its value after the
// first 1,000 invocations.
//   node --expose-gc bench/tracing_memory.bench.mjs [invocations]
import { InMemoryRunner, LlmAgent, FunctionTool } from '@google/adk'
import { TracingPlugin } from '../index.js'
import { ScriptedLlm, call } from '../__test__/helpers/scripted_llm.mjs'

const TOTAL = Number(process.argv[2] ?? 100_000)
const WARM = Math.min(1_000, TOTAL)

// Quiet ADK's per-run INFO logging: it is not what is measured.
const { setLogLevel, LogLevel } = await import('@google/adk')
try {
  setLogLevel?.(LogLevel?.ERROR ?? 3)
} catch {}

// A model that alternates a tool call and a text answer, forever.
class LoopLlm extends ScriptedLlm {
  constructor() {
    super([])
    this.n = 0
  }
  async *generateContentAsync() {
    this.n++
    yield this.n % 2 ? { content: { role: 'model', parts: [call('add', { a: 1, b: 2 })] }, turnComplete: true } : { content: { role: 'model', parts: [{ text: 'three' }] }, turnComplete: true }
  }
}

const add = new FunctionTool({ name: 'add', description: 'adds', execute: async ({ a, b }) => ({ sum: a + b }) })
const agent = new LlmAgent({ name: 'calc', description: 'calculator', model: new LoopLlm(), tools: [add] })
const tracing = new TracingPlugin({ exporter: 'none', captureContent: true })
const runner = new InMemoryRunner({ agent, appName: 'bench', plugins: [tracing] })

// RSS swings by 100 MB between samples on this workload even untraced (V8
// and malloc give pages back lazily), so a sample is the lowest of several
// taken after full GCs and a short settle.
async function rssMb() {
  let low = Infinity
  for (let i = 0; i < 6; i++) {
    globalThis.gc?.()
    await new Promise((r) => setTimeout(r, 60))
    low = Math.min(low, process.memoryUsage().rss)
  }
  return low / 1024 / 1024
}

function heapMb() {
  const m = process.memoryUsage()
  return (m.heapUsed + m.external) / 1024 / 1024
}

async function one(i) {
  const session = await runner.sessionService.createSession({ appName: 'bench', userId: 'u' })
  const request = { userId: 'u', sessionId: session.id, newMessage: { role: 'user', parts: [{ text: `add ${i}` }] } }
  if (i % 10 === 9) {
    let id
    for await (const ev of runner.runAsync(request)) {
      id = ev.invocationId
      break
    }
    tracing.finishInterruptedInvocation(id)
  } else {
    for await (const ev of runner.runAsync(request)) void ev
  }
  await runner.sessionService.deleteSession({ appName: 'bench', userId: 'u', sessionId: session.id })
}

const t0 = performance.now()
for (let i = 0; i < WARM; i++) await one(i)
const warmRss = await rssMb()
const warmHeap = heapMb()
let peak = warmRss
for (let i = WARM; i < TOTAL; i++) {
  await one(i)
  if (i % 10_000 === 0) peak = Math.max(peak, process.memoryUsage().rss / 1024 / 1024)
}
const endRss = await rssMb()
const endHeap = heapMb()
const seconds = (performance.now() - t0) / 1000
const growth = (endRss - warmRss) / warmRss
console.log(`invocations ${TOTAL} in ${seconds.toFixed(1)} s (${((seconds * 1e6) / TOTAL).toFixed(0)} us each)`)
console.log(`RSS after ${WARM}: ${warmRss.toFixed(1)} MB; at end: ${endRss.toFixed(1)} MB (${(growth * 100).toFixed(1)}%); sampled peak ${peak.toFixed(1)} MB`)
console.log(`JS heap + external after ${WARM}: ${warmHeap.toFixed(1)} MB; at end: ${endHeap.toFixed(1)} MB`)
console.log(`openInvocationCount at end: ${tracing.openInvocationCount}`)
const ok = tracing.openInvocationCount === 0 && growth <= 0.1
console.log(ok ? 'PASS' : 'FAIL')
process.exitCode = ok ? 0 : 1
