'use strict'
// The root agent's tree, flattened once per root agent object for the span
// model's agent synthesis: 5-tuples (name, parent, description, model,
// sequential flag). Cycle-safe; cached in a WeakMap.

const SEQUENTIAL = new Set(['SequentialAgent', 'LoopAgent'])
// ADK brands its agent classes with registry symbols (works across copies).
const BRANDS = [Symbol.for('google.adk.sequentialAgent'), Symbol.for('google.adk.loopAgent')]
const cache = new WeakMap()

function isSequential(agent) {
  for (const brand of BRANDS) if (agent[brand] === true) return true
  for (let p = Object.getPrototypeOf(agent); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    if (SEQUENTIAL.has(p.constructor?.name)) return true
  }
  return false
}

function str(v) {
  return typeof v === 'string' ? v : ''
}

function flattenAgentTree(root) {
  if (root === null || typeof root !== 'object') return undefined
  const hit = cache.get(root)
  if (hit) return hit
  const out = []
  const seen = new Set()
  const walk = (agent, parentName, depth) => {
    if (agent === null || typeof agent !== 'object' || seen.has(agent) || depth > 64) return
    seen.add(agent)
    const name = str(agent.name)
    // A description is kept as it is, '' included (ADK's default), as the root's.
    const description = typeof agent.description === 'string' ? agent.description : undefined
    out.push(name, parentName, description, str(agent.model), isSequential(agent) ? '1' : '')
    const subs = agent.subAgents
    if (Array.isArray(subs)) for (const sub of subs) walk(sub, name, depth + 1)
  }
  walk(root, '', 0)
  cache.set(root, out)
  return out
}

/** The root of `agent`'s tree (ADK's rootAgent getter, guarded). */
function rootOf(agent) {
  if (agent === null || typeof agent !== 'object') return undefined
  try {
    return agent.rootAgent ?? agent
  } catch {
    return agent
  }
}

module.exports = { flattenAgentTree, rootOf }
