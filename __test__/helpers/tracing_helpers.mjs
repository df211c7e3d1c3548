// Shared by the tracing_* suites: a traced runner over ScriptedLlm agents and
// span lookups.
import { InMemoryRunner, LlmAgent, FunctionTool, ParallelAgent } from '@google/adk'
import { AgentTool, TracingPlugin } from '../../index.js'
import { ScriptedLlm, call } from './scripted_llm.mjs'

export function addTool() {
  return new FunctionTool({
    name: 'add',
    description: 'Adds two numbers',
    execute: async ({ a, b }) => ({ sum: a + b }),
  })
}

export function failingTool(message = 'boom') {
  return new FunctionTool({
    name: 'fail',
    description: 'Always fails',
    execute: async () => {
      throw new Error(message)
    },
  })
}

export function agent(name, script, { tools = [], partials, description = `${name} agent`, ...rest } = {}) {
  return new LlmAgent({ name, description, model: new ScriptedLlm(script, { partials }), tools, ...rest })
}

export function traced(root, { plugins = [], before = [], ...options } = {}) {
  const tracing = new TracingPlugin({ exporter: 'memory', ...options })
  const runner = new InMemoryRunner({ agent: root, appName: 'app', plugins: [...before, tracing, ...plugins] })
  return { tracing, runner }
}

export function byName(spans, name) {
  const found = spans.filter((s) => s.name === name)
  if (found.length === 0) throw new Error(`no span named ${name}: ${spans.map((s) => s.name).join(', ')}`)
  return found
}

export function one(spans, name) {
  const found = byName(spans, name)
  if (found.length !== 1) throw new Error(`${found.length} spans named ${name}`)
  return found[0]
}

export function rootOf(spans) {
  const roots = spans.filter((s) => s.parentSpanId === undefined)
  if (roots.length !== 1) throw new Error(`${roots.length} roots`)
  return roots[0]
}

export async function newSession(runner, userId = 'u') {
  return (await runner.sessionService.createSession({ appName: runner.appName, userId })).id
}

export function request(sessionId, text = 'hi', userId = 'u') {
  return { userId, sessionId, newMessage: { role: 'user', parts: [{ text }] } }
}

/** A foreign plugin: the given callbacks, every other one passes. */
export function plugin(name, callbacks) {
  const pass = () => Promise.resolve(undefined)
  const out = { name }
  for (const cb of CALLBACKS) out[cb] = callbacks[cb] ?? pass
  return out
}

const CALLBACKS = [
  'onUserMessageCallback', 'beforeRunCallback', 'onEventCallback', 'afterRunCallback',
  'beforeAgentCallback', 'afterAgentCallback', 'beforeNodeCallback', 'afterNodeCallback',
  'beforeModelCallback', 'afterModelCallback', 'onModelErrorCallback', 'beforeToolSelection',
  'beforeContextCompaction', 'afterContextCompaction', 'beforeToolCallback', 'afterToolCallback',
  'onToolErrorCallback',
]

/**
 * A ParallelAgent `par` whose branch `a` calls the AgentTool `helper`: the
 * sub-agent calls `add(addArgs)`, then its model never answers; branch `b`
 * answers ('b done') once the sub-agent's model is waiting. A consumer that
 * breaks on b's answer leaves the sub-run open mid-way.
 */
export function parallelWithStuckSubRun(addArgs) {
  let entered
  const inside = new Promise((resolve) => (entered = resolve))
  const helper = new LlmAgent({
    name: 'helper',
    model: new ScriptedLlm([
      call('add', addArgs),
      async () => {
        entered()
        await new Promise(() => {}) // never answers
      },
    ]),
    tools: [addTool()],
  })
  const a = new LlmAgent({
    name: 'a',
    model: new ScriptedLlm([call('helper', { request: 'go' })]),
    tools: [new AgentTool({ agent: helper })],
  })
  const b = new LlmAgent({
    name: 'b',
    model: new ScriptedLlm([
      async () => {
        await inside
        return 'b done'
      },
    ]),
  })
  return new ParallelAgent({ name: 'par', subAgents: [a, b] })
}
