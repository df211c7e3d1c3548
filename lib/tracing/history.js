'use strict'
// History captured once per conversation. Per (session, agent), remembers as
// JSON tokens (json_tokens.js) the Contents of the last captured model
// request; the next request of that conversation is checked against them
// item by item, exactly, and only the items after the first difference are
// serialised and sent. The native tracer keeps the same conversation's item
// JSON under the same slot number and renders `gen_ai.input.messages` from
// the kept prefix and the new suffix, off the JavaScript thread.
//
// JavaScript decides everything and the native side only follows (it never
// evicts on its own), so both sides always hold the same items. Bounded: at
// most MAX_CONVERSATIONS remembered, and at most MAX_CHARS characters of
// JSON in all; the least recently used conversations are dropped first.

const { record, match } = require('./json_tokens.js')

const MAX_CONVERSATIONS = 256
const MAX_CHARS = 32 * 1024 * 1024
/** A history this size or bigger is not remembered (its own share of the budget). */
const MAX_CONVERSATION_CHARS = MAX_CHARS / 2
/** A history this size or bigger is tracked from its first model call. */
const MIN_CHARS = 8 * 1024
/** A smaller one is tracked from its MIN_ITEMS-th item on: by then its
 * conversation has come back twice (two exchanges before this request, in
 * this invocation or earlier ones), and it will likely come back again.
 * With the span model on its own thread, checking a small history costs
 * this thread less than the serialisation it saves (a five-item history of
 * 717 characters: JSON.stringify 4.6 µs, the check 1.4 µs), but recording
 * it costs more than one serialisation: a fresh session's single run of two
 * model calls (one item, then three) would pay that and gain nothing
 * (measured in such runs: beforeModelCallback 14.8 µs per run untracked,
 * 26.6 µs tracked at once). The item count decides without remembering
 * conversations that never come back: a map of them, with a fresh session
 * added at every run, cost such runs 4-6 µs each inside ADK's pipeline. */
const MIN_ITEMS = 5

class Conversation {
  constructor(slot) {
    this.slot = slot
    this.tokens = []
    // ends[i]: token index after item i; chars[i]: JSON length of items 0..i.
    this.ends = []
    this.chars = []
    // Whether the native tracer holds items under this slot.
    this.sent = false
  }

  get count() {
    return this.ends.length
  }

  get totalChars() {
    const n = this.chars.length
    return n === 0 ? 0 : this.chars[n - 1]
  }

  /** How many leading items of `contents` are the remembered ones, unchanged. */
  matchingPrefix(contents) {
    const ends = this.ends
    const tokens = this.tokens
    const n = Math.min(ends.length, contents.length)
    let at = 0
    for (let i = 0; i < n; i++) {
      const x = contents[i]
      const next = x === undefined || typeof x === 'function' || typeof x === 'symbol' ? (tokens[at] === null ? at + 1 : -1) : match(x, tokens, at, 1)
      if (next !== ends[i]) return i
      at = next
    }
    return n
  }

  /** Keeps the first `n` items. */
  truncate(n) {
    if (n >= this.ends.length) return
    this.tokens.length = n === 0 ? 0 : this.ends[n - 1]
    this.ends.length = n
    this.chars.length = n
  }

  /** Records items `from..` of `contents` after the kept ones; false if unsupported. */
  recordFrom(contents, from) {
    const tokens = this.tokens
    for (let i = from; i < contents.length; i++) {
      const x = contents[i]
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') tokens.push(null)
      else if (!record(x, tokens, 1)) return false
      this.ends.push(tokens.length)
    }
    return true
  }

  /** Sets the JSON lengths of the items recorded after the first `kept`. */
  setChars(kept, suffixJsonLength, suffixCount) {
    // Per-item lengths are only needed for the budget: spread the suffix evenly.
    let base = kept === 0 ? 0 : this.chars[kept - 1]
    const per = suffixCount === 0 ? 0 : suffixJsonLength / suffixCount
    for (let i = 0; i < suffixCount; i++) {
      base += per
      this.chars[kept + i] = base
    }
  }
}

/** The session id of a model request's context, or undefined. */
function sessionIdOf(ctx) {
  try {
    const session = ctx?.invocationContext?.session?.id
    return typeof session === 'string' ? session : undefined
  } catch {
    return undefined
  }
}

/** The conversation a model request belongs to: its session (else its
 * invocation) and agent. */
function conversationKey(session, invocationId, agent) {
  const base = session !== undefined ? `s${session}` : `i${invocationId}`
  return agent === undefined ? base : `${base}\u0000${agent}`
}

class Histories {
  /** `forget(slot)`: tells the native tracer to drop a slot's items. */
  constructor(forget) {
    this._forget = forget
    this._byKey = new Map()
    // The key set last (the most recently used): a request of the same
    // conversation again leaves the map as it is. Deleting and adding the
    // key back made V8 rebuild the small table every few calls.
    this._lastKey = undefined
    // The parts of the last key built, and that key: the requests of a
    // conversation come one after another, and its key string, hashed at
    // its first lookup, makes each lookup after it cheap; a key built anew
    // is hashed anew (checking a deep copy of a five-item history: 0.1-0.5
    // µs less a check, medians of 1.03-1.53 against 1.20-1.95 µs in seven
    // alternating runs, Node 20).
    this._keyParts = { session: undefined, agent: undefined, invocationId: undefined, key: undefined }
    this._chars = 0
    this._nextSlot = 1
    this.minChars = MIN_CHARS
    // What the checks found, for the tests: items not sent again, and
    // requests captured in full because something was not supported.
    this.reusedItems = 0
    this.unsupported = 0
  }

  /**
   * What to send for `contents` (an array) of the model request of agent
   * `agent` in context `ctx` (invocation `invocationId`):
   * `{slot, reuse, json, keep, key}` — the native tracer takes items
   * 0..reuse of `slot` (0: none), appends the items of `json` (a JSON
   * array) and keeps the result under `slot` unless `keep` is false — or
   * undefined when the contents are not supported (the caller captures
   * them in full). `key` names the conversation for `forgetKey`.
   */
  delta(ctx, invocationId, agent, contents) {
    // The key is built only where it is looked up (a fresh session's run
    // tracks nothing).
    let key = this.tracking ? this._keyOf(ctx, invocationId, agent) : undefined
    let conv = key === undefined ? undefined : this._byKey.get(key)
    let reuse = 0
    if (conv === undefined) {
      // Not tracked: captured in full; tracked from now on if it is big or long.
      let json
      try {
        json = JSON.stringify(contents)
      } catch {
        return undefined
      }
      if (typeof json !== 'string') return undefined
      if (json.length >= MAX_CONVERSATION_CHARS || (json.length < this.minChars && contents.length < MIN_ITEMS)) {
        return { slot: 0, reuse: 0, json, keep: false }
      }
      key ??= this._keyOf(ctx, invocationId, agent)
      conv = new Conversation(this._nextSlot++)
      try {
        if (!conv.recordFrom(contents, 0)) {
          this.unsupported++
          return { slot: 0, reuse: 0, json, keep: false }
        }
      } catch {
        return { slot: 0, reuse: 0, json, keep: false }
      }
      return this._keep(key, conv, 0, json, contents.length)
    }
    // Re-inserted below, most recently used last (unless it already is).
    if (key !== this._lastKey) this._byKey.delete(key)
    this._chars -= conv.totalChars
    let json
    try {
      // A getter or proxy may throw: the full capture then sanitises.
      reuse = conv.matchingPrefix(contents)
      conv.truncate(reuse)
      if (!conv.recordFrom(contents, reuse)) {
        this._untrack(key, conv)
        this.unsupported++
        return undefined
      }
      json = reuse === contents.length ? '[]' : JSON.stringify(reuse === 0 ? contents : contents.slice(reuse))
    } catch {
      this._untrack(key, conv)
      return undefined
    }
    if (typeof json !== 'string') {
      this._untrack(key, conv)
      return undefined
    }
    return this._keep(key, conv, reuse, json, contents.length)
  }

  /** conversationKey of a request: the last key itself when its parts are the same. */
  _keyOf(ctx, invocationId, agent) {
    const session = sessionIdOf(ctx)
    const last = this._keyParts
    const same = last.key !== undefined && session === last.session && agent === last.agent
    // Without a session the invocation is part of the key.
    if (same && (session !== undefined || invocationId === last.invocationId)) return last.key
    const key = conversationKey(session, invocationId, agent)
    last.session = session
    last.agent = agent
    last.invocationId = invocationId
    last.key = key
    return key
  }

  /** Remembers `conv` (its items recorded) and says what to send. */
  _keep(key, conv, reuse, json, count) {
    conv.setChars(reuse, json.length, count - reuse)
    this.reusedItems += reuse
    const total = conv.totalChars
    if (total >= MAX_CONVERSATION_CHARS) {
      // Used this once and forgotten on both sides.
      this._byKey.delete(key)
      return { slot: conv.slot, reuse, json, keep: false, key }
    }
    conv.sent = true
    // Still in place when it was the last one set (delta did not take it out).
    if (key !== this._lastKey || this._byKey.get(key) !== conv) this._byKey.set(key, conv)
    this._lastKey = key
    this._chars += total
    this._evict()
    return { slot: conv.slot, reuse, json, keep: true, key }
  }

  /** Forgets one conversation (after the native side refused its delta). */
  forgetKey(key) {
    const conv = this._byKey.get(key)
    if (conv === undefined) return
    this._byKey.delete(key)
    this._chars -= conv.totalChars
    this._drop(conv)
  }

  /** Forgets the conversation kept under `slot` (the native side could
   * not supply a delta of it). */
  forgetSlot(slot) {
    for (const [key, conv] of this._byKey) {
      if (conv.slot === slot) {
        this.forgetKey(key)
        return
      }
    }
  }

  /** Forgets every conversation (the native side is told for each). */
  clear() {
    for (const conv of this._byKey.values()) this._forget(conv.slot)
    this._byKey.clear()
    this._chars = 0
  }

  /** Whether any conversation is tracked (else no key need be built). */
  get tracking() {
    return this._byKey.size !== 0
  }

  get size() {
    return this._byKey.size
  }

  _drop(conv) {
    if (conv.sent) this._forget(conv.slot)
  }

  /** Stops tracking `key` after a failed check. */
  _untrack(key, conv) {
    this._byKey.delete(key)
    this._drop(conv)
  }

  _evict() {
    const map = this._byKey
    while (map.size > MAX_CONVERSATIONS || (this._chars > MAX_CHARS && map.size > 1)) {
      const [oldKey, oldest] = map.entries().next().value
      map.delete(oldKey)
      this._chars -= oldest.totalChars
      this._forget(oldest.slot)
    }
  }
}

module.exports = { Histories, MAX_CONVERSATIONS, MAX_CHARS, MIN_ITEMS }
