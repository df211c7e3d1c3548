'use strict'
// Reading ADK's objects: each value once, never throwing where ADK or
// another plugin handed over something unexpected.

/** `obj[key]`, for ADK events. ADK's createEvent (an object spread, then a
 * symbol key) gives many events a hidden class of their own, so `event.x`
 * misses V8's inline cache on each of them: about 250 ns per field name,
 * 1.2 µs for the five read here. Reflect.get looks the key up without that
 * cache: 15–35 ns a field either way. Same semantics (getters, proxies). */
const getField = Reflect.get

function str(v) {
  return typeof v === 'string' ? v : undefined
}

/** The agentName getter throws when a context has no agent (Workflow roots). */
function agentNameOf(ctx) {
  try {
    return str(ctx.agentName)
  } catch {
    return undefined
  }
}

/** `{id, name}` of a node callback's node when it is an agent (a BaseAgent
 * has findAgent, how tracing.md looks agents up), else undefined. */
function agentNodeOf(params) {
  const node = params?.node
  if (node === null || typeof node !== 'object' || typeof node.findAgent !== 'function') return undefined
  const id = invocationIdOf(params.nodeContext)
  const name = str(node.name)
  return id === undefined || name === undefined || name === '' ? undefined : { id, name }
}

function invocationIdOf(ctx) {
  const ic = ctx?.invocationContext
  const id = ic?.invocationId ?? ctx?.invocationId
  return typeof id === 'string' ? id : undefined
}

function errorParts(error) {
  let type = 'Error'
  let message = ''
  try {
    if (error !== null && typeof error === 'object') {
      if (typeof error.name === 'string' && error.name) type = error.name
      message = typeof error.message === 'string' ? error.message : String(error)
    } else {
      message = String(error)
    }
  } catch {
    message = 'unknown error'
  }
  return [type, message]
}

/** Whether `s` has no lone surrogate (String#isWellFormed where the
 * runtime has it; else assumed not, and the string goes as JSON). */
const wellFormed =
  typeof String.prototype.isWellFormed === 'function' ? (s) => s.isWellFormed() : () => false

/** The W3C text of a span context's `traceState` (an object with
 * `serialize()` in @opentelemetry/api); undefined when it has none. */
function traceStateText(spanContext) {
  try {
    const state = spanContext.traceState
    const text = typeof state?.serialize === 'function' ? state.serialize() : undefined
    return typeof text === 'string' && text !== '' ? text : undefined
  } catch {
    return undefined
  }
}

/** A response's usageMetadata when it is an object (its counts are read
 * as the record is written), else undefined. */
function usageOf(usage) {
  return usage !== null && typeof usage === 'object' ? usage : undefined
}

/** Whether the run of `ic` streams (SSE): a model call may then answer in
 * several non-partial responses. */
function streamsRun(ic) {
  try {
    return ic?.runConfig?.streamingMode === 'sse'
  } catch {
    return false
  }
}

/** Whether an event's content (with no function response) is its author's
 * final answer, as ADK's isFinalResponse reads it: parts, none a function
 * call; undefined for no parts (a streamed turn's usage-only close says
 * nothing of the run). A skipped summary or a long-running call also ends
 * an agent's run in ADK; left out, their runs go on in the same span. */
function isFinalAnswer(content) {
  const parts = content?.parts
  if (!Array.isArray(parts) || parts.length === 0) return undefined
  for (const part of parts) if (part?.functionCall != null) return false
  // A trailing code execution result: the model goes on (ADK's rule too).
  return parts[parts.length - 1]?.codeExecutionResult == null
}

module.exports = { getField, str, agentNameOf, agentNodeOf, invocationIdOf, errorParts, wellFormed, traceStateText, usageOf, streamsRun, isFinalAnswer }
