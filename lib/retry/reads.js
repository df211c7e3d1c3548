'use strict'
// Reading ADK objects (and whatever a tool threw) without ever throwing.
const { types } = require('node:util')

function toolNameOf(tool) {
  try {
    const name = tool?.name
    return typeof name === 'string' ? name : name == null ? '' : String(name)
  } catch {
    return ''
  }
}

// ADK's context ids are prototype getters; a context without an invocation
// (or a foreign object whose getter throws) counts under the empty key.
function invocationIdOf(context) {
  try {
    const id = context?.invocationId
    return typeof id === 'string' ? id : ''
  } catch {
    return ''
  }
}

function isThenable(value) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false
  try {
    return typeof value.then === 'function'
  } catch {
    return false
  }
}

/** `value instanceof C`, false where the check itself throws (a revoked
 * Proxy, or one in the prototype chain, or a throwing getPrototypeOf trap). */
function isInstance(value, C) {
  try {
    return value instanceof C
  } catch {
    return false
  }
}

function isError(value) {
  return types.isNativeError(value) || isInstance(value, Error)
}

function safeString(value) {
  try {
    return String(value)
  } catch {
    return '[unprintable]'
  }
}

function readOr(obj, key, fallback) {
  try {
    return obj[key]
  } catch {
    return fallback
  }
}

module.exports = { toolNameOf, invocationIdOf, isThenable, isInstance, isError, safeString, readOr }
