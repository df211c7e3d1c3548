'use strict'
// joinActiveTrace: the application's active OpenTelemetry span, read through
// `@opentelemetry/api` (an optional peer dependency). Loaded on first use and
// once: a failed load is remembered, and every run is then a new trace.

let api // undefined: not tried yet; null: not available

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
  const a = api === undefined ? load() : api
  if (a === null) return undefined
  try {
    const sc = a.trace.getSpanContext(a.context.active())
    return sc !== undefined && a.trace.isSpanContextValid(sc) ? sc : undefined
  } catch {
    return undefined
  }
}

module.exports = { activeSpanContext }
