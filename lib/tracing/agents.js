'use strict'
// The root agent's tree, flattened once per root agent object for the span
// model's agent synthesis: 5-tuples (name, parent, description, model,
// '' / '1' sequential / '2' loop). Cycle-safe; cached in a WeakMap.

// ADK brands its agent classes with registry symbols (works across copies);
// else the class names tell.
const KINDS = [
  [Symbol.for('google.adk.loopAgent'), 'LoopAgent', '2'],
  [Symbol.for('google.adk.sequentialAgent'), 'SequentialAgent', '1'],
]
const cache = new WeakMap()

/** '2' for a LoopAgent, '1' for a SequentialAgent, else ''. */
function runKind(agent) {
  for (const [brand, , kind] of KINDS) if (agent[brand] === true) return kind
  for (let p = Object.getPrototypeOf(agent); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    const name = p.constructor?.name
    for (const [, className, kind] of KINDS) if (name === className) return kind
  }
  return ''
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
    out.push(name, parentName, description, str(agent.model), runKind(agent))
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
