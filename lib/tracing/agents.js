'use strict'
// The root agent's tree, flattened for the span model's agent synthesis:
// 5-tuples (name, parent, description, model, '' / '1' sequential / '2'
// loop). Cycle-safe; cached per root agent object in a WeakMap, and
// flattened again when the tree changed since (an agent added or removed,
// renamed, re-described): tracing.md looks names up in the tree as it is.

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

/** The flat tree of `root`; the same array while the tree is unchanged. */
function flattenAgentTree(root) {
  if (root === null || typeof root !== 'object') return undefined
  const hit = cache.get(root)
  if (hit !== undefined && unchanged(hit.shape)) return hit.flat
  const out = []
  // Per agent visited: the agent, a copy of its subAgents (undefined when
  // not an array), and the three fields the tuples hold, as read.
  const shape = []
  const seen = new Set()
  const walk = (agent, parentName, depth) => {
    if (agent === null || typeof agent !== 'object' || seen.has(agent) || depth > 64) return
    seen.add(agent)
    const rawName = agent.name
    const rawDescription = agent.description
    const rawModel = agent.model
    const subs = agent.subAgents
    shape.push(agent, Array.isArray(subs) ? subs.slice() : undefined, rawName, rawDescription, rawModel)
    const name = str(rawName)
    // A description is kept as it is, '' included (ADK's default), as the root's.
    const description = typeof rawDescription === 'string' ? rawDescription : undefined
    out.push(name, parentName, description, str(rawModel), runKind(agent))
    if (Array.isArray(subs)) for (const sub of subs) walk(sub, name, depth + 1)
  }
  walk(root, '', 0)
  // A change the tuples do not show (a model object replaced by another)
  // keeps the array, so the tree is not sent again.
  const flat = hit !== undefined && sameItems(hit.flat, out) ? hit.flat : out
  cache.set(root, { flat, shape })
  return flat
}

function sameItems(a, b) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** Whether every agent of a flattened tree still reads as it did. */
function unchanged(shape) {
  for (let i = 0; i < shape.length; i += 5) {
    const agent = shape[i]
    const subs = agent.subAgents
    // The same agents, in the same array or a new one (a getter may build it).
    const copy = shape[i + 1]
    if (copy === undefined) {
      if (Array.isArray(subs)) return false
    } else {
      if (!Array.isArray(subs) || subs.length !== copy.length) return false
      for (let j = 0; j < copy.length; j++) if (subs[j] !== copy[j]) return false
    }
    if (agent.name !== shape[i + 2] || agent.description !== shape[i + 3] || agent.model !== shape[i + 4]) return false
  }
  return true
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
