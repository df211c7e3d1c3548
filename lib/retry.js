'use strict'
// ReflectAndRetryToolPlugin: answers failed tool calls with reflection
// guidance so the model corrects itself (behaviour: specs/retry.md).
//
// Counting, decisions and the guidance texts live in Rust (src/retry, via src/js/retry/). This
// shell reads the few values a failure needs from ADK's objects, renders
// `<details>` and `<args>` the way JavaScript prints them, keeps the
// (scope, tool) pairs, and makes one synchronous native call per failure.
// Callbacks it does not use are the shared pre-resolved PASS promise.
const { types } = require('node:util')
const { fillPassThroughCallbacks, PASS } = require('./plugin_shell.js')
const { retryEngineCreate, retryEngineRelease, retryGuidanceTexts, retryHotCalls } = require('./native.js')
// The per-failure calls: plain N-API callbacks taking one key number.
const { retryFailure, retryUnknownToolFailure } = retryHotCalls()
const { noteInvocationStarted } = require('./run_guarded.js')
const { isNotFoundAnswer } = require('./not_found_answer.js')

const TrackingScope = Object.freeze({ INVOCATION: 'invocation', GLOBAL: 'global' })
const REFLECT_AND_RETRY_RESPONSE_TYPE = 'ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN'
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

// --- reading ADK objects without ever throwing ------------------------------

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

// --- rendering ----------------------------------------------------------------

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

// --- unregistered tool names --------------------------------------------------

// ADK 2.0.0 throws `Function <name> is not found in the toolsDict.` for a name
// the model invented and never calls a tool callback. beforeModelCallback
// wraps the request's toolsDict so such a name finds this stand-in, whose
// failure then takes the normal onToolErrorCallback path. The tools declared
// to the model (llmRequest.config.tools) are not touched.
//
// One question gets the agent's own answer: BaseTool.processLlmRequest's
// duplicate check (`name in llmRequest.toolsDict`), so a callback after this
// plugin can still add a tool the ADK way. Telling that check from ADK's
// look-up of a called name by when it comes (the model's answer) fails where
// no callback marks it: a Workflow node handles the calls of a cached answer
// before any callback of this plugin runs.
class MissingTool {
  /** Never throws (a revoked Proxy is not one); measured faster than a
   * private brand check (`#x in value`) on Node 20. */
  static is(value) {
    return isInstance(value, MissingTool)
  }

  constructor(name, registered, request) {
    this.name = name
    this.description = 'Tool not found'
    this.isLongRunning = false
    this._registered = registered
    this._request = request
  }

  async runAsync() {
    throw new Error(`Function ${this.name} is not found in the toolsDict.`)
  }

  _getDeclaration() {
    return undefined
  }

  async processLlmRequest() {}

  /** The tools `tool` lists, never throwing (a Proxy may pass for one). */
  static available(tool) {
    try {
      const names = tool.availableToolNames()
      return Array.isArray(names) ? names : []
    } catch {
      return []
    }
  }

  /** The agent's tools, in declaration order: the order of the request's
   * function declarations (ADK adds a tool to both at once), as Python's
   * and Kotlin's dictionaries keep it. The dictionary's own key order puts
   * integer-like names first; it only orders tools with no declaration. */
  availableToolNames() {
    const dict = this._registered
    const names = []
    const listed = new Set()
    try {
      const tools = this._request?.config?.tools
      if (Array.isArray(tools)) {
        for (const tool of tools) {
          const declarations = tool?.functionDeclarations
          if (!Array.isArray(declarations)) continue
          for (const declaration of declarations) {
            const name = declaration?.name
            if (typeof name === 'string' && !listed.has(name) && Object.hasOwn(dict, name)) {
              listed.add(name)
              names.push(name)
            }
          }
        }
      }
    } catch {
      // unreadable declarations: the dictionary's order
    }
    try {
      for (const name of Object.keys(dict)) if (!listed.has(name)) names.push(name)
      return names
    } catch {
      return names
    }
  }
}

const GUARDED = Symbol('reflectAndRetryGuardedToolsDict')

// Only the agent's own tools are known: a name Object.prototype answers
// (toString, constructor, __proto__…) is a tool the model invented, as in
// Python's and Kotlin's dictionaries (with `in`, ADK took it for a tool and
// failed on its missing runAsync). For this request's dictionary only.
function isUnknownName(dict, key) {
  return typeof key === 'string' && key !== '' && !Object.hasOwn(dict, key)
}

/** Whether the `in` check being answered is a tool's processLlmRequest
 * (adding itself): the frame under the trap, by V8's call sites, which a
 * custom Error.prepareStackTrace does not change. Costs a few microseconds,
 * only for a name the agent lacks. Method names survive minifiers. */
function addingTool() {
  const { prepareStackTrace, stackTraceLimit } = Error
  try {
    Error.stackTraceLimit = 3
    Error.prepareStackTrace = (_, frames) => frames
    const holder = {}
    // Frames from the trap down: has, then what asked.
    Error.captureStackTrace(holder, addingTool)
    const frames = holder.stack
    if (!Array.isArray(frames)) return false
    for (const f of frames) {
      if (f.getFunctionName?.() === 'processLlmRequest' || f.getMethodName?.() === 'processLlmRequest') return true
    }
    return false
  } catch {
    return false
  } finally {
    try {
      Error.prepareStackTrace = prepareStackTrace
      Error.stackTraceLimit = stackTraceLimit
    } catch {
      // frozen intrinsics: nothing was changed either
    }
  }
}

// The Proxy handler of one request's toolsDict: any name the agent does not
// have is present and is a MissingTool (one per name, made on first use),
// except to a tool adding itself.
class GuardedToolsDict {
  constructor(request) {
    this.request = request
  }

  has(dict, key) {
    if (key === GUARDED) return true
    if (isUnknownName(dict, key)) return !addingTool()
    return Reflect.has(dict, key)
  }

  get(dict, key, receiver) {
    if (key === GUARDED) return true
    if (!isUnknownName(dict, key)) return Reflect.get(dict, key, receiver)
    this.missing ??= new Map()
    let tool = this.missing.get(key)
    if (tool === undefined) {
      tool = standIn(key, dict, this.request)
      this.missing.set(key, tool)
    }
    return tool
  }
}

/** The MissingTool for `key`. For a method name Object.prototype answers
 * (toString, hasOwnProperty…) the stand-in is also that method, applied to
 * whatever it is called on, so code using the dictionary as a plain object
 * (`dict.hasOwnProperty(k)`, `String(dict)`) still works. */
function standIn(key, dict, request) {
  const inherited = Reflect.get(Object.prototype, key)
  if (typeof inherited !== 'function') return new MissingTool(key, dict, request)
  const method = function (...args) {
    return Reflect.apply(inherited, this, args)
  }
  Object.setPrototypeOf(method, MissingTool.prototype)
  Object.defineProperty(method, 'name', { value: key })
  Object.assign(method, { description: 'Tool not found', isLongRunning: false, _registered: dict, _request: request })
  return method
}

function guardToolsDict(dict, request) {
  return new Proxy(dict, new GuardedToolsDict(request))
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
  constructor() {
    this.tools = new Map() // tool name -> PairKey
    this.counted = 0 // pairs with `counted` set
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
      if (this.#scope !== TrackingScope.INVOCATION || this.#scopes.size === 0) return
      this.#dropScope(invocationId)
    } catch {
      // never throws
    }
  }

  // The first callbacks of a run; either may be skipped when an earlier
  // plugin short-circuits the other, so both note the invocation.
  onUserMessageCallback(params) {
    return noteRun(params)
  }

  beforeRunCallback(params) {
    return noteRun(params)
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
    return this.#onFailure(tool, toolArgs, toolContext, found, true)
  }

  #dropScope(invocationId) {
    const keys = this.#scopes.get(invocationId)
    if (keys === undefined) return
    this.#countedPairs -= keys.counted
    this.#scopes.delete(invocationId)
    for (const pair of keys.tools.values()) this.#freeSlots.push(pair.slot)
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

  // The native key of a pair about to be counted, marked counted.
  #countedKey(toolContext, toolName) {
    const scope = this.#scopeKey(toolContext)
    let keys = this.#scopes.get(scope)
    if (keys === undefined) {
      if (this.#scopes.size >= MAX_SCOPES) this.#dropScope(this.#scopes.keys().next().value)
      keys = new ScopeKeys()
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
    const key = this.#countedKey(toolContext, name)
    const decision = MissingTool.is(tool) ? retryUnknownToolFailure(key) : retryFailure(key)
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
