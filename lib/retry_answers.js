'use strict'
// What ReflectAndRetryToolPlugin handles, told to this package's
// TracingPlugins: tracing.md asks their spans to show it whatever order the
// plugins run in, and ADK 2.0.0 may hand it to no later callback.
// - Its answers to errors found in tool results: its afterToolCallback
//   answer ends that chain, and a plugin before tracing may answer
//   onEventCallback for the event that carries it.
// - The errors tools threw that it answers: its answer ends the
//   onToolErrorCallback chain. ADK passes the answer on to every
//   afterToolCallback, where the tracing plugin takes it for the error, but
//   a plugin between the two may replace it there.

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
  if (listeners.size !== 0) tell('_retryAnswered', tool, toolContext, answer)
}

/** Called by the retry plugin as it handles an error a tool threw. */
function announceToolError(tool, toolContext, error) {
  if (listeners.size !== 0) tell('_retryToolError', tool, toolContext, error)
}

function tell(method, tool, toolContext, what) {
  for (const ref of listeners) {
    const plugin = ref.deref()
    if (plugin === undefined) {
      listeners.delete(ref)
      continue
    }
    try {
      plugin[method](tool, toolContext, what)
    } catch {
      // A listener's problem is its own; the answer goes to the model anyway.
    }
  }
}

module.exports = { listenForRetryAnswers, announceRetryAnswer, announceToolError }
