'use strict'
// ReflectAndRetryToolPlugin: answers failed tool calls with reflection
// guidance so the model corrects itself (behaviour: specs/retry.md).
//
// Counting, decisions and the guidance texts live in Rust (src/retry, via
// src/js/retry/). This shell reads the few values a failure needs from
// ADK's objects (lib/retry/reads.js), renders `<details>` and `<args>` the
// way JavaScript prints them (lib/retry/answers.js), keeps the (scope,
// tool) pairs, and makes one synchronous native call per failure. Unknown
// tool names reach it through lib/retry/missing_tool.js. Callbacks it does
// not use are the shared pre-resolved PASS promise.
const { fillPassThroughCallbacks, PASS } = require('./plugin_shell.js')
const { retryEngineCreate, retryEngineRelease, retryHotCalls } = require('./native.js')
// The per-failure calls: plain N-API callbacks taking one key number.
const { retryFailure, retryUnknownToolFailure } = retryHotCalls()
const { noteInvocationStarted } = require('./run_guarded.js')
const { announceRetryAnswer, announceToolError } = require('./retry_answers.js')
const { isNotFoundAnswer } = require('./not_found_answer.js')
const { callerOf, innerRunsLinked } = require('./agent_tool_link.js')
const { toolNameOf, invocationIdOf, isThenable, isError, safeString, readOr } = require('./retry/reads.js')
const {
  REFLECT_AND_RETRY_RESPONSE_TYPE,
  retryGuidance,
  exceededGuidance,
  notRetryableGuidance,
  toolNotFoundText,
  prettyJson,
  describe,
  response,
} = require('./retry/answers.js')
const { MissingTool, GUARDED, guardToolsDict } = require('./retry/missing_tool.js')

const TrackingScope = Object.freeze({ INVOCATION: 'invocation', GLOBAL: 'global' })
const GLOBAL_SCOPE_KEY = '__global_reflect_and_retry_scope__'
const RESULT_ERROR_EXCEEDED = 'A tool result reported an error and the retry limit was exceeded.'

// Frees a plugin's native engine when the plugin is garbage collected.
const engines = new FinalizationRegistry(retryEngineRelease)

// An onToolErrorCallback error that could not be read.
const LOST = Symbol('lost')

// retryFailure answers a positive retry count or one of these.
const EXCEEDED = -1
const REJECT = -2
const NOT_FOUND = -3

// runGuarded must learn the id of a run that throws before its first event
// (another plugin's beforeRunCallback) to finish it on every plugin; without a
// runGuarded call driving the run this costs one AsyncLocalStorage lookup.
function noteRun(params) {
  try {
    noteInvocationStarted(params.invocationContext.invocationId)
  } catch {
    // no context: nothing to note
  }
  return PASS
}

// --- the plugin ---------------------------------------------------------------

// Engine ids and slots travel as one number (src/js/retry/mod.rs `Key`):
// engine id * 2^32 + (FRESH when the pair holds no count) + slot.
const ENGINE_UNIT = 2 ** 32
const FRESH = 2 ** 31
// Beyond these the number would not be exact; never reached in practice
// (live plugins; pairs alive at once in one plugin).
const MAX_ENGINE = 2 ** 21
const MAX_SLOT = FRESH - 1
/** Invocation scopes kept at most (as TracingPlugin's maxOpenInvocations
 * default): runs cut short that nobody finished would otherwise keep their
 * counts forever; past it the scope counted least recently is dropped. */
const MAX_SCOPES = 10000

// The failed tools of one scope (see #scopes).
class ScopeKeys {
  constructor(caller) {
    this.tools = new Map() // tool name -> PairKey
    this.counted = 0 // pairs with `counted` set
    this.caller = caller // the invocation whose AgentTool call started this one, if any
  }
}

class PairKey {
  constructor(key, slot) {
    this.key = key // engine id * 2^32 + slot
    this.slot = slot
    this.counted = false
  }
}

function validateOptions(options) {
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object') throw new TypeError('ReflectAndRetryToolPlugin options must be an object.')
  const { name, maxRetries, throwExceptionIfRetryExceeded, trackingScope, resultErrorExtractor, retryPredicate } =
    options
  if (name !== undefined && typeof name !== 'string') throw new TypeError('name must be a string.')
  if (maxRetries !== undefined && !(typeof maxRetries === 'number' && Number.isInteger(maxRetries) && maxRetries >= 0)) {
    throw new Error('maxRetries must be a non-negative integer.')
  }
  if (throwExceptionIfRetryExceeded !== undefined && typeof throwExceptionIfRetryExceeded !== 'boolean') {
    throw new TypeError('throwExceptionIfRetryExceeded must be a boolean.')
  }
  if (trackingScope !== undefined && trackingScope !== TrackingScope.INVOCATION && trackingScope !== TrackingScope.GLOBAL) {
    throw new Error(`Unknown scope: ${typeof trackingScope === 'string' ? JSON.stringify(trackingScope) : safeString(trackingScope)}`)
  }
  if (resultErrorExtractor !== undefined && typeof resultErrorExtractor !== 'function') {
    throw new TypeError('resultErrorExtractor must be a function.')
  }
  if (retryPredicate !== undefined && typeof retryPredicate !== 'function') {
    throw new TypeError('retryPredicate must be a function.')
  }
  return {
    name: name ?? 'reflect_retry_tool_plugin',
    maxRetries: maxRetries === undefined ? 3 : maxRetries === 0 ? 0 : maxRetries, // -0 prints as 0
    throwExceptionIfRetryExceeded: throwExceptionIfRetryExceeded ?? true,
    trackingScope: trackingScope ?? TrackingScope.INVOCATION,
    resultErrorExtractor,
    retryPredicate,
  }
}

class ReflectAndRetryToolPlugin {
  #name
  #maxRetries
  #maxText
  #throw
  #scope
  #extractor
  #predicate
  #engine
  // engine id * 2^32: the base of every key the native functions take.
  #keyBase
  // scope key -> ScopeKeys: every (scope, tool) pair that failed in a scope
  // still open, with its slot in the engine and whether that slot holds
  // the pair's count. Maps keyed by the JavaScript strings themselves: any
  // two distinct ids or names (lone surrogates, NULs) are distinct pairs.
  // Only this instance uses its engine, on this thread, so `counted` is
  // the truth: a success, or the end of a scope, clears it without a
  // native call, and the next failure of an uncounted pair tells the engine
  // to start from zero (FRESH). A reset pair keeps its entry (a retry loop
  // alternates failure and success) until its scope ends, when its slot is
  // freed for reuse: bounded by the open invocations' failed tools, and in
  // global scope by the tool names that ever failed.
  #scopes = new Map()
  // invocation id -> the scopes of the AgentTool runs it started (this
  // package's AgentTool): ending a run ends theirs too, as on the tracing
  // plugin, so the manual finishInterruptedInvocation of the outer id drops
  // the counts of a sub-run it cut short. Entries live only while those
  // scopes do.
  #inner = new Map()
  // Invocations finished as interrupted, the newest last (bounded as the
  // scopes): a tool still running when its run was cut short may fail
  // later, and its count must not bring back a scope nobody ends again.
  #ended = new Set()
  // Pairs with `counted` set, over all scopes.
  #countedPairs = 0
  // Slots of ended scopes, reused before new ones are taken.
  #freeSlots = []
  #nextSlot = 0
  constructor(options) {
    const o = validateOptions(options)
    this.#name = o.name
    this.#maxRetries = o.maxRetries
    this.#throw = o.throwExceptionIfRetryExceeded
    this.#scope = o.trackingScope
    this.#extractor = o.resultErrorExtractor
    this.#predicate = o.retryPredicate
    this.#maxText = String(o.maxRetries)
    this.#engine = retryEngineCreate(o.maxRetries, o.throwExceptionIfRetryExceeded)
    if (!(this.#engine < MAX_ENGINE)) {
      retryEngineRelease(this.#engine)
      throw new Error('ReflectAndRetryToolPlugin: too many live plugin instances.')
    }
    this.#keyBase = this.#engine * ENGINE_UNIT
    engines.register(this, this.#engine)
  }

  // Read-only: the setters accept and ignore assignments, so strict-mode code
  // assigning to them does not throw either.
  get name() {
    return this.#name
  }
  set name(_) {}
  get maxRetries() {
    return this.#maxRetries
  }
  set maxRetries(_) {}
  get throwExceptionIfRetryExceeded() {
    return this.#throw
  }
  set throwExceptionIfRetryExceeded(_) {}
  get trackingScope() {
    return this.#scope
  }
  set trackingScope(_) {}
  /** Alias of `trackingScope`, as in adk-js. */
  get scope() {
    return this.#scope
  }
  set scope(_) {}

  /** Whether `value` is an instance (its private fields are there). */
  static #owns(value) {
    return value !== null && typeof value === 'object' && #scope in value
  }

  /** Drops the counts of an invocation that never reached afterRunCallback. */
  finishInterruptedInvocation(invocationId) {
    try {
      // Never throws, called unbound (`ids.forEach(plugin.finishInterruptedInvocation)`) included.
      if (typeof invocationId !== 'string' || !ReflectAndRetryToolPlugin.#owns(this)) return
      if (this.#scope !== TrackingScope.INVOCATION) return
      this.#noteEnded(invocationId)
      if (this.#scopes.size !== 0) this.#dropScope(invocationId)
    } catch {
      // never throws
    }
  }

  // The first callbacks of a run; either may be skipped when an earlier
  // plugin short-circuits the other, so both note the invocation.
  onUserMessageCallback(params) {
    if (this.#ended.size !== 0) this.#started(params)
    return noteRun(params)
  }

  beforeRunCallback(params) {
    if (this.#ended.size !== 0) this.#started(params)
    return noteRun(params)
  }

  /** A run under an id finished before (a resumed invocation) counts again. */
  #started(params) {
    this.#ended.delete(invocationIdOf(readOr(params, 'invocationContext', undefined)))
  }

  afterRunCallback(params) {
    if (this.#scope === TrackingScope.INVOCATION && this.#scopes.size !== 0) {
      const id = invocationIdOf(readOr(params, 'invocationContext', undefined))
      try {
        this.#dropScope(id)
      } catch {
        // a bad id changes nothing
      }
    }
    return PASS
  }

  beforeModelCallback(params) {
    try {
      const request = params?.llmRequest
      const dict = request?.toolsDict
      if (dict !== null && typeof dict === 'object' && !dict[GUARDED]) request.toolsDict = guardToolsDict(dict, request)
    } catch {
      // A frozen or foreign request: unknown names stay ADK's own error.
    }
    return PASS
  }

  onToolErrorCallback(params) {
    let tool, toolArgs, toolContext, error
    let lost = false
    try {
      ;({ tool, toolArgs, toolContext, error } = params)
    } catch {
      // A throwing getter or a revoked Proxy: what can be read, field by
      // field. An error that cannot be read cannot be rethrown either.
      tool = readOr(params, 'tool', undefined)
      toolArgs = readOr(params, 'toolArgs', undefined)
      toolContext = readOr(params, 'toolContext', undefined)
      error = readOr(params, 'error', LOST)
      lost = error === LOST
      if (lost) error = undefined
    }
    // What this returns (an answer or the rethrown error) ends the
    // onToolErrorCallback chain: the tracing plugins hear of the error here
    // (lib/retry_answers.js).
    if (!lost) announceToolError(tool, toolContext, error)
    try {
      return this.#onFailure(tool, toolArgs, toolContext, error, false, lost)
    } catch (e) {
      return Promise.reject(e) // always a Promise, even for a bug of ours
    }
  }

  afterToolCallback(params) {
    let tool, toolArgs, toolContext, result
    try {
      ;({ tool, toolArgs, toolContext, result } = params)
      // Our own answers come back through here: neither is a success.
      if (typeof result === 'object' && result !== null) {
        if (result.response_type === REFLECT_AND_RETRY_RESPONSE_TYPE || isNotFoundAnswer(result)) return PASS
      }
      if (MissingTool.is(tool)) return PASS
    } catch {
      return PASS // unreadable params or result: nothing to count
    }
    try {
      const extractor = this.#extractor
      if (extractor === undefined) return this.#success(tool, toolContext)
      const found = extractor({ tool, toolArgs, toolContext, result })
      if (isThenable(found)) {
        return Promise.resolve(found).then((value) => this.#afterExtract(tool, toolArgs, toolContext, value))
      }
      return this.#afterExtract(tool, toolArgs, toolContext, found)
    } catch (e) {
      return Promise.reject(e) // the extractor threw (or a bug of ours): still a Promise
    }
  }

  #afterExtract(tool, toolArgs, toolContext, found) {
    if (found === null || found === undefined) return this.#success(tool, toolContext)
    // The answer ends the afterToolCallback chain: the tracing plugins hear
    // it here (lib/retry_answers.js). A rejection passes through unchanged.
    return this.#onFailure(tool, toolArgs, toolContext, found, true).then((answer) => {
      announceRetryAnswer(tool, toolContext, answer)
      return answer
    })
  }

  #noteEnded(invocationId) {
    const ended = this.#ended
    if (ended.has(invocationId)) return
    if (ended.size >= MAX_SCOPES) ended.delete(ended.values().next().value)
    ended.add(invocationId)
  }

  #dropScope(invocationId) {
    const inner = this.#inner.get(invocationId)
    if (inner !== undefined) {
      this.#inner.delete(invocationId)
      // A sub-run ended with its caller: its tools may fail late too.
      const ended = this.#ended.has(invocationId)
      for (const id of inner) {
        if (ended) this.#noteEnded(id)
        this.#dropScope(id)
      }
    }
    const keys = this.#scopes.get(invocationId)
    if (keys === undefined) return
    this.#countedPairs -= keys.counted
    this.#scopes.delete(invocationId)
    for (const pair of keys.tools.values()) this.#freeSlots.push(pair.slot)
    const siblings = keys.caller === undefined ? undefined : this.#inner.get(keys.caller)
    if (siblings !== undefined) {
      siblings.delete(invocationId)
      if (siblings.size === 0) this.#inner.delete(keys.caller)
    }
  }

  /** The invocation whose AgentTool call started `toolContext`'s run
   * (`scope`), now linked to it. */
  #linkToCaller(toolContext, scope) {
    if (this.#scope !== TrackingScope.INVOCATION || !innerRunsLinked()) return undefined
    let caller
    try {
      caller = callerOf(toolContext?.invocationContext)?.invocationId
    } catch {
      return undefined // a foreign context: counted as a run of its own
    }
    if (typeof caller !== 'string' || caller === scope) return undefined
    let inner = this.#inner.get(caller)
    if (inner === undefined) this.#inner.set(caller, (inner = new Set()))
    inner.add(scope)
    return caller
  }

  #scopeKey(toolContext) {
    return this.#scope === TrackingScope.GLOBAL ? GLOBAL_SCOPE_KEY : invocationIdOf(toolContext)
  }

  #success(tool, toolContext) {
    if (this.#countedPairs === 0) return PASS
    const keys = this.#scopes.get(this.#scopeKey(toolContext))
    if (keys === undefined || keys.counted === 0) return PASS
    const pair = keys.tools.get(toolNameOf(tool))
    if (pair === undefined || !pair.counted) return PASS
    pair.counted = false
    keys.counted--
    this.#countedPairs--
    return PASS
  }

  // The native key of a pair of `scope` (#scopeKey of `toolContext`) about
  // to be counted, marked counted.
  #countedKey(scope, toolContext, toolName) {
    let keys = this.#scopes.get(scope)
    if (keys === undefined) {
      if (this.#scopes.size >= MAX_SCOPES) this.#dropScope(this.#scopes.keys().next().value)
      keys = new ScopeKeys(this.#linkToCaller(toolContext, scope))
      this.#scopes.set(scope, keys)
    } else if (this.#scopes.size > 1) {
      // A scope counted again moves to the newest end, so the one dropped at
      // the bound is the one counted least recently, not a live run's.
      this.#scopes.delete(scope)
      this.#scopes.set(scope, keys)
    }
    let pair = keys.tools.get(toolName)
    if (pair === undefined) {
      const slot = this.#freeSlots.length !== 0 ? this.#freeSlots.pop() : this.#nextSlot++
      // Past MAX_SLOT pairs alive at once the engine counts every failure
      // as a first one (it keeps no slot that large).
      pair = new PairKey(this.#keyBase + Math.min(slot, MAX_SLOT), slot)
      keys.tools.set(toolName, pair)
    }
    if (pair.counted) return pair.key
    pair.counted = true
    keys.counted++
    this.#countedPairs++
    return pair.key + FRESH
  }

  #forgetIfEnded(scope) {
    const keys = this.#scopes.get(scope)
    if (this.#ended.has(scope) || (keys?.caller !== undefined && this.#ended.has(keys.caller))) this.#dropScope(scope)
  }

  // A failure: thrown by the tool, or found in its result (`foundInResult`).
  // `lost`: the thrown error could not be read (never rethrown then).
  #onFailure(tool, toolArgs, toolContext, error, foundInResult, lost = false) {
    const predicate = this.#predicate
    if (predicate !== undefined) {
      let verdict
      try {
        verdict = predicate({ tool, toolArgs, toolContext, error })
      } catch (e) {
        return Promise.reject(e)
      }
      if (isThenable(verdict)) {
        return Promise.resolve(verdict).then((v) =>
          v === false
            ? this.#notRetryable(tool, toolArgs, error, foundInResult)
            : this.#decide(tool, toolArgs, toolContext, error, foundInResult, lost),
        )
      }
      if (verdict === false) return Promise.resolve(this.#notRetryable(tool, toolArgs, error, foundInResult))
    }
    return this.#decide(tool, toolArgs, toolContext, error, foundInResult, lost)
  }

  #notRetryable(tool, toolArgs, error, foundInResult) {
    const failure = describe(error, foundInResult)
    const guidance = notRetryableGuidance(toolNameOf(tool), failure.text, prettyJson(toolArgs ?? {}))
    return response(failure.type, failure.details, 0, guidance)
  }

  #decide(tool, toolArgs, toolContext, error, foundInResult, lost) {
    const name = toolNameOf(tool)
    // An unknown name too: another agent of the run may have a tool by that
    // name, whose success resets the shared count.
    const scope = this.#scopeKey(toolContext)
    const key = this.#countedKey(scope, toolContext, name)
    const decision = MissingTool.is(tool) ? retryUnknownToolFailure(key) : retryFailure(key)
    // A failure after its run was finished as interrupted is answered, but
    // its count is not kept.
    if (this.#ended.size !== 0) this.#forgetIfEnded(scope)
    if (decision === REJECT && !lost) {
      // onToolErrorCallback rethrows the very Error it was given.
      return Promise.reject(foundInResult && !isError(error) ? new Error(RESULT_ERROR_EXCEEDED) : error)
    }
    if (decision === NOT_FOUND) return Promise.resolve({ error: toolNotFoundText(name, MissingTool.available(tool)) })
    const failure = describe(error, foundInResult)
    const args = prettyJson(toolArgs ?? {})
    if (decision === EXCEEDED || decision === REJECT) {
      return Promise.resolve(
        response(failure.type, failure.details, this.#maxRetries, exceededGuidance(name, failure.text, args, this.#maxText)),
      )
    }
    return Promise.resolve(
      response(failure.type, failure.details, decision, retryGuidance(name, failure.text, args, decision, this.#maxText)),
    )
  }
}

fillPassThroughCallbacks(ReflectAndRetryToolPlugin)

module.exports = { ReflectAndRetryToolPlugin, TrackingScope, REFLECT_AND_RETRY_RESPONSE_TYPE, GLOBAL_SCOPE_KEY }
