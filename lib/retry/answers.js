'use strict'
// What the model gets back (retry.md): the answer object, the guidance texts
// with their placeholders filled, and <details> and <args> rendered the way
// JavaScript prints them.
const { retryGuidanceTexts } = require('../native.js')
const { isError, safeString, readOr } = require('./reads.js')

const REFLECT_AND_RETRY_RESPONSE_TYPE = 'ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN'

// The guidance texts are Rust's (src/retry/guidance.rs), fetched once as the
// fixed pieces between their placeholders. Joining them here makes V8 cons
// strings that share the pieces: no 1.5 KB copy per failure, no napi string.
const TEXTS = retryGuidanceTexts()
const [R0, R1, R2, R3, R4, R5] = TEXTS.retry
const [E0, E1, E2, E3, E4, E5] = TEXTS.exceeded
const [N0, N1, N2, N3, N4] = TEXTS.notRetryable
const [F0, F1, F2, F3, F4] = TEXTS.toolNotFound

function retryGuidance(name, details, args, n, max) {
  return R0 + name + R1 + details + R2 + args + R3 + n + R4 + max + R5
}

function exceededGuidance(name, details, args, max) {
  return E0 + name + E1 + max + E2 + details + E3 + args + E4 + name + E5
}

function notRetryableGuidance(name, details, args) {
  return N0 + name + N1 + details + N2 + args + N3 + name + N4
}

function toolNotFoundText(name, available) {
  return F0 + name + F1 + (available.length ? available.join(F3) : F4) + F2
}

// Used only when JSON.stringify throws (cycles, BigInt, throwing getters or
// toJSON): the same layout, with what cannot be rendered named in place.
function fallbackJson(root) {
  const ancestors = []
  function render(value, key, indent) {
    if (value !== null && (typeof value === 'object' || typeof value === 'bigint')) {
      try {
        const toJSON = value.toJSON
        if (typeof toJSON === 'function') value = toJSON.call(value, key)
      } catch {
        return '"[unreadable]"'
      }
    }
    switch (typeof value) {
      case 'string':
        return JSON.stringify(value)
      case 'number':
        return Number.isFinite(value) ? String(value) : 'null'
      case 'boolean':
      case 'bigint':
        return String(value)
      case 'object':
        break
      default:
        return undefined // undefined, functions and symbols are skipped, as JSON does
    }
    if (value === null) return 'null'
    if (ancestors.includes(value)) return '"[Circular]"'
    ancestors.push(value)
    try {
      const inner = indent + '  '
      const parts = []
      if (Array.isArray(value)) {
        const length = readOr(value, 'length', 0)
        for (let i = 0; i < length; i++) {
          const item = readOr(value, i, '[unreadable]')
          parts.push(inner + (render(item, String(i), inner) ?? 'null'))
        }
        return parts.length ? `[\n${parts.join(',\n')}\n${indent}]` : '[]'
      }
      let keys
      try {
        keys = Object.keys(value)
      } catch {
        return '"[unreadable]"'
      }
      for (const k of keys) {
        const text = render(readOr(value, k, '[unreadable]'), k, inner)
        if (text !== undefined) parts.push(`${inner}${JSON.stringify(k)}: ${text}`)
      }
      return parts.length ? `{\n${parts.join(',\n')}\n${indent}}` : '{}'
    } finally {
      ancestors.pop()
    }
  }
  try {
    return render(root, '', '') ?? safeString(root)
  } catch {
    return '"[unreadable]"'
  }
}

/** `JSON.stringify(value, null, 2)`, never throwing. */
function prettyJson(value) {
  try {
    const text = JSON.stringify(value, null, 2)
    if (text !== undefined) return text
  } catch {
    return fallbackJson(value)
  }
  return safeString(value) // a function or symbol: JSON has no text for it
}

/** What a failure shows: `error_type`, `error_details` and the `<details>` text. */
function describe(error, foundInResult) {
  if (isError(error)) {
    // Named loads, not readOr's keyed ones: those went megamorphic and took
    // V8's slow lookup on every failure.
    let rawName = ''
    let rawMessage = ''
    try {
      rawName = error.name
    } catch {
      // a throwing getter: no name
    }
    try {
      rawMessage = error.message
    } catch {
      // a throwing getter: no message
    }
    const type = rawName ? safeString(rawName) : 'Error'
    const message = typeof rawMessage === 'string' ? rawMessage : rawMessage == null ? '' : safeString(rawMessage)
    return { type, details: message, text: `${type}: ${message}` }
  }
  const type = foundInResult ? 'ToolError' : 'Error'
  if (typeof error === 'string') return { type, details: error, text: error }
  if (error !== null && typeof error === 'object') return { type, details: error, text: prettyJson(error) }
  const text = safeString(error)
  return { type, details: text, text }
}

function response(type, details, retryCount, guidance) {
  return {
    response_type: REFLECT_AND_RETRY_RESPONSE_TYPE,
    error_type: type,
    error_details: details,
    retry_count: retryCount,
    reflection_guidance: guidance,
  }
}

module.exports = {
  REFLECT_AND_RETRY_RESPONSE_TYPE,
  retryGuidance,
  exceededGuidance,
  notRetryableGuidance,
  toolNotFoundText,
  prettyJson,
  describe,
  response,
}
