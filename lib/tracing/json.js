'use strict'
// JSON text of foreign values (ADK contents, tool arguments and results) for
// span attributes. The fast path is one JSON.stringify; only when it throws
// (a BigInt, a cycle, a throwing getter or toJSON) does the slow, safe walk
// run: BigInt -> decimal string, a TRUE cycle -> "[Circular]" (an object
// reached again through a sibling is kept), anything unserialisable -> null.

function safeJson(value) {
  try {
    return JSON.stringify(value)
  } catch {
    try {
      return JSON.stringify(sanitize(value, new Set(), ''))
    } catch {
      return 'null'
    }
  }
}

// `ancestors` holds the objects on the path from the root to `value` only,
// so shared references that are not cycles serialise in full.
function sanitize(value, ancestors, key) {
  try {
    if (value !== null && typeof value === 'object' && typeof value.toJSON === 'function') {
      value = value.toJSON(key)
    }
  } catch {
    return null
  }
  switch (typeof value) {
    case 'bigint':
      return value.toString()
    case 'function':
    case 'symbol':
    case 'undefined':
      return undefined
    case 'object':
      break
    default:
      return value
  }
  if (value === null) return null
  if (ancestors.has(value)) return '[Circular]'
  ancestors.add(value)
  try {
    if (Array.isArray(value)) {
      const out = new Array(value.length)
      for (let i = 0; i < value.length; i++) {
        let item
        try {
          item = sanitize(value[i], ancestors, String(i))
        } catch {
          item = null
        }
        out[i] = item === undefined ? null : item
      }
      return out
    }
    const out = {}
    for (const k of Object.keys(value)) {
      let item
      try {
        item = sanitize(value[k], ancestors, k)
      } catch {
        item = null
      }
      if (item !== undefined) out[k] = item
    }
    return out
  } finally {
    ancestors.delete(value)
  }
}

module.exports = { safeJson, sanitize }
