'use strict'
// The tool calls whose beforeToolCallback reached a TracingPlugin and whose
// afterToolCallback has not yet, by function call id. An afterToolCallback
// for a call not counted here starts that call's span: an earlier plugin
// answered its beforeToolCallback (a cache, ADK's SecurityPlugin refusing
// the call), and ADK runs afterToolCallback for every call.

/** Calls remembered (the oldest is forgotten past this): a call whose
 * afterToolCallback another plugin answered first never comes back. */
const MAX_STARTED_TOOLS = 10000

class StartedTools {
  constructor() {
    // call id -> calls by that id started and not done (parallel branches'
    // models may give the same id).
    this._counts = new Map()
  }

  start(callId) {
    const counts = this._counts
    const count = counts.get(callId)
    if (count !== undefined) {
      counts.set(callId, count + 1)
      return
    }
    if (counts.size >= MAX_STARTED_TOOLS) counts.delete(counts.keys().next().value)
    counts.set(callId, 1)
  }

  /** Whether a call by `callId` was started and not yet done (and now is). */
  done(callId) {
    const counts = this._counts
    const count = counts.get(callId)
    if (count === undefined) return false
    if (count === 1) counts.delete(callId)
    else counts.set(callId, count - 1)
    return true
  }
}

module.exports = { StartedTools }
