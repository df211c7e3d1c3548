'use strict'
// A value's JSON.stringify output described as a flat token list, and an
// exact check of another value against such a list without serialising it.
//
// Tokens: strings, finite numbers, booleans and null as they are, and three
// private markers for '{', '[' and the end of either; an object's emitted
// keys precede their values. JSON.stringify's output is a function of this
// list, so a value whose walk yields the same tokens serialises to the same
// text. Strings are immutable: the list is a snapshot even when the objects
// it was read from change later. ADK deep-copies each Content per model call
// with lodash's cloneDeep, which shares the strings, so checking a copy costs
// one pointer comparison per string.
//
// Anything whose serialisation is not a plain walk (toJSON, class instances
// and boxed primitives, BigInt, non-finite numbers, depth beyond MAX_DEPTH
// such as a cycle) is not supported: `record` returns false and `match` -1,
// and the caller serialises in full.

const OBJECT = Object.freeze({ token: '{' })
const ARRAY = Object.freeze({ token: '[' })
const END = Object.freeze({ token: 'end' })
const MAX_DEPTH = 100
const objectProto = Object.prototype

/** Whether JSON.stringify leaves `v` out of an object (or writes null in an array). */
function skipped(v) {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol'
}

/** A plain object JSON.stringify walks as-is (its own enumerable keys). */
function plainObject(v) {
  const proto = Object.getPrototypeOf(v)
  return (proto === objectProto || proto === null) && typeof v.toJSON !== 'function'
}

/** Appends the tokens of `v` to `out`; false if `v` is not supported. */
function record(v, out, depth) {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      out.push(v)
      return true
    case 'number':
      if (!Number.isFinite(v)) return false
      out.push(v)
      return true
    case 'object':
      break
    default:
      return false
  }
  if (v === null) {
    out.push(null)
    return true
  }
  if (depth > MAX_DEPTH) return false
  if (Array.isArray(v)) {
    if (typeof v.toJSON === 'function') return false
    out.push(ARRAY)
    for (let i = 0; i < v.length; i++) {
      const x = v[i]
      if (skipped(x)) out.push(null)
      else if (!record(x, out, depth + 1)) return false
    }
    out.push(END)
    return true
  }
  if (!plainObject(v)) return false
  out.push(OBJECT)
  const keys = Object.keys(v)
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    const x = v[k]
    if (skipped(x)) continue
    out.push(k)
    if (!record(x, out, depth + 1)) return false
  }
  out.push(END)
  return true
}

/** The index after `v`'s tokens if `t` holds them at `i`, else -1. */
function match(v, t, i, depth) {
  switch (typeof v) {
    case 'string':
    case 'boolean':
    case 'number':
      // NaN never matches: it is never recorded.
      return t[i] === v ? i + 1 : -1
    case 'object':
      break
    default:
      return -1
  }
  if (v === null) return t[i] === null ? i + 1 : -1
  if (depth > MAX_DEPTH) return -1
  if (Array.isArray(v)) {
    if (t[i] !== ARRAY || typeof v.toJSON === 'function') return -1
    i++
    for (let j = 0; j < v.length; j++) {
      const x = v[j]
      const type = typeof x
      if (type === 'string' || type === 'number' || type === 'boolean') {
        // A leaf compared here, not in a call of its own (most values are).
        if (t[i] !== x) return -1
        i++
      } else if (skipped(x)) {
        if (t[i] !== null) return -1
        i++
      } else {
        i = match(x, t, i, depth + 1)
        if (i < 0) return -1
      }
    }
    return t[i] === END ? i + 1 : -1
  }
  if (t[i] !== OBJECT || !plainObject(v)) return -1
  i++
  // for-in allocates no key list. It lists the own enumerable keys in
  // Object.keys order, then inherited enumerable ones (none on a plain
  // Object.prototype): an extra key only makes the check fail.
  for (const k in v) {
    const x = v[k]
    const type = typeof x
    if (type === 'string' || type === 'number' || type === 'boolean') {
      if (t[i] !== k || t[i + 1] !== x) return -1
      i += 2
      continue
    }
    if (skipped(x)) continue
    if (t[i] !== k) return -1
    i = match(x, t, i + 1, depth + 1)
    if (i < 0) return -1
  }
  return t[i] === END ? i + 1 : -1
}

module.exports = { record, match }
