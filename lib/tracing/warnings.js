'use strict'
// TracingPlugin's warnings: process.emitWarning, once per process for each
// kind of problem (tracing.md), never throwing into the run.

const warned = new Set()
function warnOnce(kind, message, code = `ADK_TRACING_${kind}`) {
  // The exporter already sends one warning per kind of problem; the cap only
  // keeps a misbehaving collector from growing this set without bound.
  if (warned.has(kind) || warned.size >= 1024) return
  warned.add(kind)
  try {
    process.emitWarning(message, { type: 'TracingPluginWarning', code })
  } catch {
    // A broken warning handler must not break the run either.
  }
}

/** The exporter thread's warnings arrive here: once per process for each
 * kind of problem, whatever collector, endpoint or answer its text names. */
function exportWarning(message, kind) {
  warnOnce(`EXPORT ${typeof kind === 'string' ? kind : message}`, message, 'ADK_TRACING_EXPORT')
}

/** What a thrown value says, never throwing: the value may be a revoked
 * Proxy, `Object.create(null)`, or have a throwing `message` or `toString`. */
function thrownText(error) {
  try {
    if ((error !== null && typeof error === 'object') || typeof error === 'function') {
      const message = error.message
      if (typeof message === 'string' && message) return message
    }
  } catch {
    // an unreadable message: try the value itself
  }
  try {
    return String(error)
  } catch {
    return 'a value that cannot be printed'
  }
}

function problem(kind, error) {
  warnOnce(kind, `TracingPlugin ${kind} failed and was skipped: ${thrownText(error)}`)
}

module.exports = { warnOnce, exportWarning, problem }
