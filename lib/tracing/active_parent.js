'use strict'
// joinActiveTrace: the application's active OpenTelemetry span, read through
// `@opentelemetry/api` (an optional peer dependency). Loaded on first use and
// once: a failed load is remembered, and every run is then a new trace.

let api // undefined: not tried yet; null: not available
// Where @opentelemetry/api 1.x (every copy of it in the process) keeps what
// an application registered: context manager, tracer provider, propagator.
// While it is absent no span can be active, so the API's answer is known
// without asking it: inside ADK's pipeline each run found its code out of
// the CPU's caches, and the two calls a run makes cost 3.9 µs each.
const API_GLOBAL = Symbol.for('opentelemetry.js.api.1')
// The last span context found valid: both start callbacks of a run see the
// same one, and the validity check is two regular expressions.
let lastValid

function load() {
  try {
    const m = require('@opentelemetry/api')
    const ok =
      typeof m?.trace?.getSpanContext === 'function' &&
      typeof m.trace.isSpanContextValid === 'function' &&
      typeof m.context?.active === 'function'
    api = ok ? m : null
  } catch {
    api = null
  }
  return api
}

/**
 * The span context active now when it is valid (`{ traceId, spanId,
 * traceFlags }`), else undefined. An AsyncLocalStorageContextManager the
 * application registered makes it the span the run was started in.
 */
function activeSpanContext() {
  if (globalThis[API_GLOBAL] === undefined) return undefined
  const a = api === undefined ? load() : api
  if (a === null) return undefined
  try {
    const sc = a.trace.getSpanContext(a.context.active())
    if (sc === undefined || sc === lastValid) return sc
    if (!a.trace.isSpanContextValid(sc)) return undefined
    lastValid = sc
    return sc
  } catch {
    return undefined
  }
}

module.exports = { activeSpanContext }
