'use strict'
// ReflectAndRetryToolPlugin's answers to errors found in tool results, told
// to this package's TracingPlugins: tracing.md asks their spans to show such
// an answer whatever order the plugins run in, and ADK 2.0.0 may hand it to
// no later callback. The retry plugin's afterToolCallback answer ends that
// chain, and a plugin before tracing may answer onEventCallback for the
// event that carries it. (An answer to a thrown error needs no channel: ADK
// passes it on to every afterToolCallback as the result.)

// WeakRefs of the listening plugins: a plugin the program let go of is
// collected, and its ref swept out as plugins are added.
const listeners = new Set()
let sweepAt = 64

/** `plugin._retryAnswered(tool, toolContext, answer)` hears every answer. */
function listenForRetryAnswers(plugin) {
  listeners.add(new WeakRef(plugin))
  if (listeners.size < sweepAt) return
  for (const ref of listeners) if (ref.deref() === undefined) listeners.delete(ref)
  sweepAt = Math.max(64, listeners.size * 2)
}

/** Called by the retry plugin as it answers a failure found in a result. */
function announceRetryAnswer(tool, toolContext, answer) {
  for (const ref of listeners) {
    const plugin = ref.deref()
    if (plugin === undefined) {
      listeners.delete(ref)
      continue
    }
    try {
      plugin._retryAnswered(tool, toolContext, answer)
    } catch {
      // A listener's problem is its own; the answer goes to the model anyway.
    }
  }
}

module.exports = { listenForRetryAnswers, announceRetryAnswer }
