'use strict'
// TracingPlugin: mirrors ADK callbacks into OpenTelemetry GenAI spans.
// The callbacks read the few values they need from ADK's objects and write
// them as records (lib/tracing/records.js), handed in batches to the native
// tracer, whose span model runs on a thread of its own; unused callbacks
// are the shared PASS promise. Tracing never throws into the run: every
// problem becomes one process warning per kind.
const native = require('./native.js')
const {
  NativeTracer,
  flushSink,
  shutdownSink,
  sinksPending,
  flushPendingSinks,
  shutdownAllSinksSync,
} = native
const { fillPassThroughCallbacks, PASS } = require('./plugin_shell.js')
const { noteInvocationStarted } = require('./run_guarded.js')
const { callerOf } = require('./agent_tool_link.js')
const { isNotFoundAnswer } = require('./not_found_answer.js')
const { safeJson } = require('./tracing/json.js')
const { flattenAgentTree, rootOf } = require('./tracing/agents.js')
const { activeSpanContext } = require('./tracing/active_parent.js')
const { Histories } = require('./tracing/history.js')
const { ToolsJson } = require('./tracing/tools_json.js')
const R = require('./tracing/records.js')

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

// ---- the process-wide exit path -------------------------------------------
const live = new Set() // WeakRefs of live plugins
// Plugins with open invocations are held strongly: a plugin only reachable
// from a finished module scope may be collected before exit, and its
// dangling spans with it.
const pinned = new Set()
let exitHooked = false
let beforeExitFlushes = 0
// When beforeExit first found spans pending (since it last found none).
let pendingSince

function forgetDelivered() {
  try {
    if (!sinksPending()) {
      pendingSince = undefined
      beforeExitFlushes = 0
    }
  } catch {
    // the exit handler's bound still holds
  }
}

function eachLive(fn) {
  for (const plugin of pinned) {
    try {
      fn(plugin)
    } catch {
      // Exit must go on for the other plugins.
    }
  }
  for (const ref of live) {
    const plugin = ref.deref()
    if (plugin === undefined) {
      live.delete(ref)
      continue
    }
    if (pinned.has(plugin)) continue
    try {
      fn(plugin)
    } catch {
      // Exit must go on for the other plugins.
    }
  }
}

function hookExit() {
  if (exitHooked) return
  exitHooked = true
  // The event loop ran dry: whatever is still open was abandoned (a consumer
  // that broke out and never finished it). End it and flush asynchronously.
  process.on('beforeExit', () => {
    eachLive((p) => p._beforeExit())
    // Sinks of every plugin, also those the program let go of. The flush
    // keeps the loop alive; beforeExit then comes again, with nothing
    // pending. The flushes since spans were first found pending share the
    // exit budget (a collector that is down must not hold the process);
    // the cap guards against a sink that never settles.
    try {
      if (!sinksPending()) {
        pendingSince = undefined
      } else if (beforeExitFlushes < 16) {
        pendingSince ??= performance.now()
        const flush = flushPendingSinks(performance.now() - pendingSince)
        if (flush) {
          beforeExitFlushes++
          // All delivered: a program that goes on (another listener gave the
          // loop work) has the whole budget again at its next end.
          flush.then(forgetDelivered, forgetDelivered)
        }
      }
    } catch {
      // Exit goes on: the exit handler still delivers within its bound.
    }
  })
  // process.exit() or the natural end: synchronous, bounded shutdown so a
  // network sink still delivers the interrupted spans.
  process.on('exit', () => {
    eachLive((p) => p._exit())
    try {
      shutdownAllSinksSync(pendingSince === undefined ? 0 : performance.now() - pendingSince)
    } catch {
      // Nothing more can be done while the process ends.
    }
  })
}

// ---- options ----------------------------------------------------------------
function typeError(message) {
  return new TypeError(`TracingPlugin: ${message}`)
}

function optionalString(options, key) {
  const v = options[key]
  if (v !== undefined && typeof v !== 'string') throw typeError(`option '${key}' must be a string.`)
  return v
}

function stringRecord(options, key) {
  const v = options[key]
  if (v === undefined) return undefined
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw typeError(`option '${key}' must be an object of strings.`)
  const out = []
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') throw typeError(`option '${key}.${k}' must be a string.`)
    out.push([k, val])
  }
  return out
}

function nonNegativeInt(value, label, { positive = false, max = 0xffffffff } = {}) {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (positive ? 1 : 0) || value > max) {
    const most = value > max ? ` no greater than ${max}` : ''
    throw typeError(`option '${label}' must be a ${positive ? 'positive' : 'non-negative'} integer${most}.`)
  }
  return value
}

function nativeOptions(options) {
  const weave = options.weave
  if (weave !== undefined && (weave === null || typeof weave !== 'object')) throw typeError("option 'weave' must be an object.")
  if (weave !== undefined) {
    if (typeof weave.project !== 'string') throw typeError("option 'weave.project' must be a string ('entity/project').")
    for (const k of ['apiKey', 'baseUrl']) {
      if (weave[k] !== undefined && typeof weave[k] !== 'string') throw typeError(`option 'weave.${k}' must be a string.`)
    }
  }
  const batch = options.batch
  if (batch !== undefined && (batch === null || typeof batch !== 'object')) throw typeError("option 'batch' must be an object.")
  const exporter = options.exporter
  if (exporter !== undefined && typeof exporter !== 'string') throw typeError("option 'exporter' must be 'otlp', 'console', 'memory' or 'none'.")
  return {
    exporter,
    endpoint: optionalString(options, 'endpoint'),
    headers: stringRecord(options, 'headers'),
    weave: weave && { project: weave.project, apiKey: weave.apiKey, baseUrl: weave.baseUrl },
    serviceName: optionalString(options, 'serviceName'),
    resourceAttributes: stringRecord(options, 'resourceAttributes'),
    batch: batch && {
      maxQueueSize: nonNegativeInt(batch.maxQueueSize, 'batch.maxQueueSize', { positive: true }),
      maxExportBatchSize: nonNegativeInt(batch.maxExportBatchSize, 'batch.maxExportBatchSize', { positive: true }),
      scheduledDelayMillis: nonNegativeInt(batch.scheduledDelayMillis, 'batch.scheduledDelayMillis'),
      // A batch needs some time to be sent: 0 is refused (as OTEL_BSP_EXPORT_TIMEOUT=0 is).
      exportTimeoutMillis: nonNegativeInt(batch.exportTimeoutMillis, 'batch.exportTimeoutMillis', { positive: true }),
    },
    maxOpenInvocations: nonNegativeInt(options.maxOpenInvocations, 'maxOpenInvocations', { positive: true }),
    stdoutIsTty: process.stdout?.isTTY === true,
    exitFlushTimeoutMillis: nonNegativeInt(options.exitFlushTimeoutMillis, 'exitFlushTimeoutMillis'),
    environment: IS_MAIN_THREAD ? undefined : workerEnvironment(),
  }
}

/** A worker thread's own environment, for the exporter's configuration
 * (OTEL_*, WANDB_*, NO_COLOR…): its process.env, not the process's. */
function workerEnvironment() {
  const vars = {}
  for (const [k, v] of Object.entries(process.env)) if (typeof v === 'string') vars[k] = v
  return vars
}

// The environment's rules of tracing.md, read for each run (a change
// between runs applies, as in ADK): bits of native.envRules. On the main
// thread process.env is the process's environment, which the native side
// reads for less than two reads through process.env cost (4-7 µs a run
// inside ADK's pipeline, where they run cold). A worker thread's
// process.env is a copy of its own: its values are read here.
const CAPTURE_RULE = 1
const VERTEX_RULE = 2
const IS_MAIN_THREAD = require('node:worker_threads').isMainThread
const readEnvRules = IS_MAIN_THREAD
  ? native.envRules
  : () => native.envRulesOf(process.env.ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS, process.env.GOOGLE_GENAI_USE_VERTEXAI)

// The attribute value length limit's variables as a worker thread sees
// them, for each batch it hands over (the native side reads the process's
// environment on the main thread). Order: src/export/config.rs
// VALUE_LIMIT_VARS.
function workerValueLimits() {
  const env = process.env
  return [env.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT ?? '', env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT ?? '']
}

/** The content-capture rule of tracing.md (env unset or empty: on). */
function envCapture() {
  return (readEnvRules() & CAPTURE_RULE) !== 0
}

// ---- reading ADK objects ------------------------------------------------------
/** `obj[key]`, for ADK events. ADK's createEvent (an object spread, then a
 * symbol key) gives many events a hidden class of their own, so `event.x`
 * misses V8's inline cache on each of them: about 250 ns per field name,
 * 1.2 µs for the five read here. Reflect.get looks the key up without that
 * cache: 15–35 ns a field either way. Same semantics (getters, proxies). */
const getField = Reflect.get

function str(v) {
  return typeof v === 'string' ? v : undefined
}

/** The agentName getter throws when a context has no agent (Workflow roots). */
function agentNameOf(ctx) {
  try {
    return str(ctx.agentName)
  } catch {
    return undefined
  }
}

/** `{id, name}` of a node callback's node when it is an agent (a BaseAgent
 * has findAgent, how tracing.md looks agents up), else undefined. */
function agentNodeOf(params) {
  const node = params?.node
  if (node === null || typeof node !== 'object' || typeof node.findAgent !== 'function') return undefined
  const id = invocationIdOf(params.nodeContext)
  const name = str(node.name)
  return id === undefined || name === undefined || name === '' ? undefined : { id, name }
}

function invocationIdOf(ctx) {
  const ic = ctx?.invocationContext
  const id = ic?.invocationId ?? ctx?.invocationId
  return typeof id === 'string' ? id : undefined
}

function errorParts(error) {
  let type = 'Error'
  let message = ''
  try {
    if (error !== null && typeof error === 'object') {
      if (typeof error.name === 'string' && error.name) type = error.name
      message = typeof error.message === 'string' ? error.message : String(error)
    } else {
      message = String(error)
    }
  } catch {
    message = 'unknown error'
  }
  return [type, message]
}

const CONFIG_KEYS = ['temperature', 'topP', 'maxOutputTokens', 'frequencyPenalty', 'presencePenalty', 'seed', 'stopSequences', 'candidateCount']

// `"key":` of each CONFIG_KEYS entry, for configJson's fast path.
const CONFIG_PREFIXES = CONFIG_KEYS.map((k) => `${JSON.stringify(k)}:`)

/** The JSON of the CONFIG_KEYS `config` sets. Usually all numbers: their
 * JSON is then built directly (the same text JSON.stringify of the picked
 * object gives: String(n) for finite numbers, else null) without an
 * intermediate object, and the same numbers as the last call's give back
 * its text (an agent sends the same config on every call); anything else
 * takes the general path. Each key is read once (a getter runs once, as
 * before), unless a getter throws: then each is read again on its own. */
function configJson(config) {
  if (config === null || typeof config !== 'object') return undefined
  try {
    return configJsonOf(config)
  } catch {
    // A getter threw: the fields that can be read, as plain values.
    const readable = {}
    for (const key of CONFIG_KEYS) {
      try {
        const v = config[key]
        if (v !== undefined) readable[key] = v
      } catch {
        // left out, as a field the config does not set
      }
    }
    return configJsonOf(readable)
  }
}

function configJsonOf(config) {
  const values = configValues
  const last = lastConfig.values
  let same = true
  for (let i = 0; i < CONFIG_KEYS.length; i++) {
    let v = config[CONFIG_KEYS[i]]
    if (v === null) v = undefined
    if (v !== undefined && typeof v !== 'number') return pickedConfigJson(config, numbersJson(values, i), i, v)
    values[i] = v
    if (v !== last[i]) same = false
  }
  if (same) return lastConfig.json
  const body = numbersJson(values, values.length)
  const json = body === undefined ? undefined : `${body}}`
  for (let i = 0; i < values.length; i++) last[i] = values[i]
  lastConfig.json = json
  return json
}

// configJson's numbers of this call, and the last all-number call's with
// its text (NaN never compares equal: such a config is built again).
const configValues = new Array(CONFIG_KEYS.length).fill(undefined)
const lastConfig = { values: new Array(CONFIG_KEYS.length).fill(undefined), json: undefined }

/** The JSON object of `values[0..end]` (numbers, or undefined for none)
 * without its closing brace, or undefined when there are none. */
function numbersJson(values, end) {
  let out
  for (let i = 0; i < end; i++) {
    const v = values[i]
    if (v === undefined) continue
    out = (out === undefined ? '{' : `${out},`) + CONFIG_PREFIXES[i] + (Number.isFinite(v) ? String(v) : 'null')
  }
  return out
}

/** configJson's general path from key `at` (value `value`) on: the
 * numbers before it come back from their JSON `out` (a non-finite one as
 * null, which stringifies the same). */
function pickedConfigJson(config, out, at, value) {
  const picked = out === undefined ? {} : JSON.parse(`${out}}`)
  picked[CONFIG_KEYS[at]] = value
  for (let i = at + 1; i < CONFIG_KEYS.length; i++) {
    const v = config[CONFIG_KEYS[i]]
    if (v !== undefined && v !== null) picked[CONFIG_KEYS[i]] = v
  }
  return safeJson(picked)
}

/** Whether `s` has no lone surrogate (String#isWellFormed where the
 * runtime has it; else assumed not, and the string goes as JSON). */
const wellFormed =
  typeof String.prototype.isWellFormed === 'function' ? (s) => s.isWellFormed() : () => false


// The native function the callbacks use: tracerApply(handle, ...) hands a
// batch of records (lib/tracing/records.js) to the tracing thread.
const CALLS = Object.freeze({ tracerApply: native.tracerApply })

// How long records may wait for the next hand-over (a program that needs
// them applied sooner reads a result: every reading hands them over first).
const HAND_OVER_MS = 5

// What tracerApply answers: bits the tracing thread set since.
const WARNED = 1
const SLOTS_REFUSED = 2
const PROBLEM = 4

/** The W3C text of a span context's `traceState` (an object with
 * `serialize()` in @opentelemetry/api); undefined when it has none. */
function traceStateText(spanContext) {
  try {
    const state = spanContext.traceState
    const text = typeof state?.serialize === 'function' ? state.serialize() : undefined
    return typeof text === 'string' && text !== '' ? text : undefined
  } catch {
    return undefined
  }
}

/** Today's capture of every request in full (the differential test's reference). */
function envFullCapture() {
  return process.env.ADK_NATIVE_TRACING_FULL_CAPTURE === '1'
}

/** A response's usageMetadata when it is an object (its counts are read
 * as the record is written), else undefined. */
function usageOf(usage) {
  return usage !== null && typeof usage === 'object' ? usage : undefined
}

const RETRY_RESPONSE_TYPE = 'ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN'

/** [type, message] of the thrown error a retry plugin answer (a result
 * afterToolCallback sees) reports, else undefined. An error found in a
 * result ('ToolError') never reaches this plugin's afterToolCallback as an
 * answer: the retry plugin's own answer there ends the chain. */
function retryAnsweredError(result) {
  if (result === null || typeof result !== 'object' || result.response_type !== RETRY_RESPONSE_TYPE) return undefined
  const type = typeof result.error_type === 'string' ? result.error_type : 'Error'
  if (type === 'ToolError') return undefined
  // As src/trace/retry_outcome.rs reads an answer in a function response.
  const details = result.error_details
  return [type, typeof details === 'string' ? details : details == null ? type : (safeJson(details) ?? type)]
}

/** What the span model needs of a function response: all of it when
 * captured (the tool result), else only a retry plugin response's fields. */
function responseJson(response, capture) {
  if (capture) return safeJson(response ?? {}) ?? '{}'
  if (response === null || typeof response !== 'object') return '{}'
  if (response.response_type !== RETRY_RESPONSE_TYPE) return notFoundAnswerJson(response)
  return safeJson({
    response_type: response.response_type,
    error_type: response.error_type,
    error_details: response.error_details,
    retry_count: response.retry_count,
    reflection_guidance: response.reflection_guidance,
  }) ?? '{}'
}

/** The retry plugin's answer to a tool name the model invented, past its
 * limit (retry.md), for the span model to tell apart (an error either way
 * round the plugins are registered); any other result: '{}'. */
function notFoundAnswerJson(response) {
  if (!isNotFoundAnswer(response) || Object.keys(response).length !== 1) return '{}'
  return safeJson({ error: response.error }) ?? '{}'
}

/** Whether the span model can use the result afterToolCallback saw: with
 * content capture every one (a null or undefined shows as null); without,
 * only a retry plugin response (for its fields). */
function keepsSeenResult(result, capture) {
  return capture || (result !== null && typeof result === 'object' && result.response_type === RETRY_RESPONSE_TYPE)
}

/** The JSON of a result afterToolCallback saw (tracing.md Added: made
 * JSON-safe, so a tool's `undefined` or `null` is `null`, as Weave writes it;
 * a function response event's missing response is `{}` instead). */
function seenJson(result, capture) {
  return result == null ? 'null' : responseJson(result, capture)
}

// Results afterToolCallback saw, held per invocation (at most this many
// each, the latest; an older one is made JSON when pushed out) until it
// ends: only those no function response event answered (by call id) are
// then made JSON, so the usual path stringifies a result once, on the event.
const SEEN_PER_INVOCATION = 64

// Agent trees a tracer keeps, each sent once (src/js/tracing/records.rs
// has the same bound).
const MAX_TREES = 64
/** What a run without an agent (a Workflow root) has of a tree. */
const NO_TREE = Object.freeze({ handle: 0, flat: undefined })

/** Whether the run of `ic` streams (SSE): a model call may then answer in
 * several non-partial responses. */
function streamsRun(ic) {
  try {
    return ic?.runConfig?.streamingMode === 'sse'
  } catch {
    return false
  }
}

/** Flat (id, name, response JSON) triples of an event's function responses. */
function functionResponsesOf(content, capture) {
  const parts = content?.parts
  if (!Array.isArray(parts)) return undefined
  let out
  for (const part of parts) {
    const fr = part?.functionResponse
    if (fr === null || typeof fr !== 'object') continue
    ;(out ??= []).push(str(fr.id) ?? '', str(fr.name) ?? '', responseJson(fr.response, capture))
  }
  return out
}

/** Whether an event's content (with no function response) is its author's
 * final answer, as ADK's isFinalResponse reads it: parts, none a function
 * call; undefined for no parts (a streamed turn's usage-only close says
 * nothing of the run). A skipped summary or a long-running call also ends
 * an agent's run in ADK; left out, their runs go on in the same span. */
function isFinalAnswer(content) {
  const parts = content?.parts
  if (!Array.isArray(parts) || parts.length === 0) return undefined
  for (const part of parts) if (part?.functionCall != null) return false
  // A trailing code execution result: the model goes on (ADK's rule too).
  return parts[parts.length - 1]?.codeExecutionResult == null
}

// ---- the plugin ------------------------------------------------------------------
class TracingPlugin {
  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw typeError('options must be an object.')
    // Only `undefined` means the default, as for every other option (and
    // for ReflectAndRetryToolPlugin's name): `null` is an error.
    const name = options.name === undefined ? 'tracing_plugin' : options.name
    if (typeof name !== 'string') throw typeError("option 'name' must be a string.")
    if (options.captureContent !== undefined && typeof options.captureContent !== 'boolean') {
      throw typeError("option 'captureContent' must be a boolean.")
    }
    if (options.joinActiveTrace !== undefined && typeof options.joinActiveTrace !== 'boolean') {
      throw typeError("option 'joinActiveTrace' must be a boolean.")
    }
    let native
    try {
      native = new NativeTracer(nativeOptions(options), exportWarning)
    } catch (e) {
      if (e instanceof TypeError) throw e
      if (e && e.code === 'InvalidArg') throw new TypeError(e.message)
      throw new Error(e && e.message ? e.message : String(e))
    }
    Object.defineProperty(this, '_name', { value: name })
    Object.defineProperty(this, '_native', { value: native })
    Object.defineProperty(this, '_captureOption', { value: options.captureContent })
    Object.defineProperty(this, '_sinkId', { value: native.sinkId })
    // The callbacks reach the native tracer through its handle: a function
    // call costs less than half a method call on the native object
    // (src/js/tracing/state.rs).
    Object.defineProperty(this, '_h', { value: native.handle })
    // Replaceable by benchmarks that time the JavaScript side alone.
    Object.defineProperty(this, '_n', { value: CALLS, writable: true })
    // The callbacks' records not yet applied (lib/tracing/records.js); they
    // are applied when a run ends, when the batch is big, and before
    // anything reads the native tracer's state.
    Object.defineProperty(this, '_r', { value: new R.Records() })
    Object.defineProperty(this, '_apply', {
      value: IS_MAIN_THREAD
        ? (nums, n, text, big, now) => this._n.tracerApply(this._h, nums, n, text, big, now)
        : (nums, n, text, big, now) => this._n.tracerApply(this._h, nums, n, text, big, now, workerValueLimits()),
    })
    this._timer = undefined
    Object.defineProperty(this, '_printsTraces', { value: native.printsTraces === true })
    Object.defineProperty(this, '_timerFlush', {
      value: () => {
        this._timer = undefined
        this._flush()
      },
    })
    this._capture = options.captureContent ?? envCapture()
    this._stopped = false
    this._shutdownPromise = undefined
    this._lastStart = undefined
    this._lastUserContent = undefined
    this._lastParent = undefined
    this._lastAgent = undefined
    this._join = options.joinActiveTrace ?? true
    this._treeless = new Set()
    // Root agent -> its flat tree and that tree's handle in the native
    // tracer (sent once, and again when the tree changed).
    this._trees = new WeakMap()
    this._treeCount = 0
    this._maxOpen = options.maxOpenInvocations ?? 10000
    this._seen = new Map() // invocation id -> Map(token -> { result, callId })
    // Runs started here and not yet finished, oldest first: past
    // maxOpenInvocations the oldest is finished as interrupted from here,
    // so the results it holds reach its spans (the native side's own cap
    // is the backstop for runs whose start this plugin did not see).
    this._open = new Map()
    // invocation id -> agent name -> runs of that agent node in flight.
    this._nodeRuns = new Map()
    this._seenToken = 0
    // Invocations whose AgentTool calls started runs here (lib/agent_tool.js):
    // only their ends ask the native side which runs they end. Bounded like
    // the open invocations.
    this._callers = new Set()
    // History captured once per conversation (off: today's full capture).
    this._histories = envFullCapture() ? undefined : new Histories((slot) => this._r.forgetHistory(slot))
    // Tool declarations checked against the agent's last ones (off: each serialised).
    this._tools = new ToolsJson(this._histories !== undefined)
    const warning = native.warning
    // Each kind of problem (NoExportKind in src/export/config.rs) is
    // warned about once, whatever value caused it.
    if (warning) warnOnce(`NO_EXPORTER ${native.warningKind}`, warning, 'ADK_TRACING_NO_EXPORTER')
    live.add(new WeakRef(this))
    hookExit()
  }

  // Read-only, as the retry plugin's: the setters accept and ignore
  // assignments, so strict-mode code assigning to them does not throw.
  get name() {
    return this._name
  }
  set name(_) {}

  get openInvocationCount() {
    this._flush()
    return this._native.openInvocationCount
  }
  set openInvocationCount(_) {}

  get droppedSpanCount() {
    this._flush()
    return this._native.droppedSpanCount
  }
  set droppedSpanCount(_) {}

  /** After a callback: the batch goes now when it is big, else within
   * HAND_OVER_MS (one hand-over for several runs: the tracing thread is
   * woken once for them and applies them back to back). */
  _handOverSoon() {
    if (this._r.full) {
      this._flush()
    } else if (this._timer === undefined) {
      this._timer = setTimeout(this._timerFlush, HAND_OVER_MS)
      this._timer.unref?.()
    }
  }

  /** Hands the records not yet handed over to the tracing thread, and
   * takes what it has to tell. Never throws. */
  _flush() {
    const r = this._r
    if (r.n === 0) return
    let bits
    try {
      bits = r.take(this._apply)
    } catch (e) {
      problem('applying callbacks', e)
      return
    }
    if (this._open.size === 0) pinned.delete(this)
    if (bits === 0) return
    try {
      if ((bits & WARNED) !== 0) this._drainWarnings()
      if ((bits & SLOTS_REFUSED) !== 0) {
        const slots = this._native.takeRefusedSlots()
        if (slots) for (const slot of slots) this._histories?.forgetSlot(slot)
      }
      if ((bits & PROBLEM) !== 0) problem('applying callbacks', new Error(this._native.takeProblem() ?? 'unknown'))
    } catch (e) {
      problem('applying callbacks', e)
    }
  }

  // A run starts: onUserMessageCallback (runAsync) or beforeRunCallback.
  _start(ic, userContent) {
    const id = ic?.invocationId
    if (typeof id !== 'string') return
    noteInvocationStarted(id)
    pinned.add(this)
    // beforeRunCallback follows onUserMessageCallback for the same run: the
    // second call only adds what changed (a plugin may replace the message;
    // ADK moves ic.agent to a resumed session's agent in between).
    const again = this._lastStart === id
    // A run of this package's AgentTool: a child of the call that started it.
    const caller = again ? undefined : callerOf(ic)
    // joinActiveTrace: else the span active now (ADK runs both start
    // callbacks in the same context) becomes the root's parent, in its trace.
    const parent = this._join && caller === undefined ? activeSpanContext() : undefined
    const agent = ic.agent
    if (again && userContent === this._lastUserContent && parent === this._lastParent && agent === this._lastAgent) return
    this._lastStart = id
    this._lastUserContent = userContent
    this._lastParent = parent
    this._lastAgent = agent
    // The root is the agent that runs, ic.agent (not the top of its tree:
    // an AgentTool's agent, a runner over a sub-agent). By
    // beforeRunCallback ADK has moved it to the agent a resumed session
    // goes on with, as Weave's plugin and ADK's own spans name it; a
    // Workflow root has none. Kept with the open run (runs' start callbacks
    // may interleave).
    const open = this._open
    const known = open.has(id)
    const root = (agent !== null && typeof agent === 'object' ? agent : undefined) ?? open.get(id)
    if (!known && open.size >= this._maxOpen) this.finishInterruptedInvocation(open.keys().next().value)
    open.set(id, root)
    const rules = readEnvRules()
    const capture = again ? this._capture : (this._capture = this._captureOption ?? (rules & CAPTURE_RULE) !== 0)
    if (root === undefined) this._noteTreeless(id)
    // The whole tree the root agent belongs to: a resumed session's agent
    // may hand over to its parent or a peer (the span model makes no span
    // for an agent above the root agent that did not run).
    const tree = this._treeOf(rootOf(root))
    const session = ic.session
    // Everything is read before the record is written: a throwing getter
    // must not leave half a record.
    const flat = tree.handle === 0 ? tree.flat : undefined
    const userJson = capture && userContent != null ? safeJson(userContent) : undefined
    const vertex = (rules & VERTEX_RULE) !== 0
    const sampled = parent === undefined ? undefined : (parent.traceFlags & 1) === 1
    const traceState = parent === undefined ? undefined : traceStateText(parent)
    const sessionId = str(session?.id)
    const appName = str(session?.appName)
    const userId = str(session?.userId)
    const rootName = str(root?.name)
    const rootDescription = str(root?.description)
    const traceId = str(parent?.traceId)
    const spanId = str(parent?.spanId)
    const isRemote = parent?.isRemote === true
    const streaming = streamsRun(ic)
    // A run starting after a beforeExit: the exit budget starts afresh.
    pendingSince = undefined
    beforeExitFlushes = 0
    const r = this._r
    r.start(id, sessionId, appName, userId, rootName, rootDescription, tree.handle, flat, userJson, capture, vertex, traceId, spanId, sampled, isRemote, traceState, streaming)
    if (caller !== undefined) {
      const callers = this._callers
      if (callers.size >= this._maxOpen) callers.delete(callers.values().next().value)
      callers.add(caller.invocationId)
      r.link(id, caller.invocationId, caller.functionCallId, caller.toolName)
    }
    this._handOverSoon()
  }

  onUserMessageCallback(params) {
    if (this._stopped) return PASS
    try {
      this._start(params?.invocationContext, params?.userMessage)
    } catch (e) {
      problem('onUserMessageCallback', e)
    }
    return PASS
  }

  beforeRunCallback(params) {
    if (this._stopped) return PASS
    try {
      const ic = params?.invocationContext
      this._start(ic, ic?.userContent)
    } catch (e) {
      problem('beforeRunCallback', e)
    }
    return PASS
  }

  onEventCallback(params) {
    if (this._stopped) return PASS
    try {
      const id = params?.invocationContext?.invocationId
      const event = params?.event
      if (typeof id !== 'string' || event === null || typeof event !== 'object') return PASS
      // Read with getField, not event.x: see getField.
      const partial = getField(event, 'partial') === true
      if (partial) return PASS
      const content = getField(event, 'content')
      const capture = this._capture
      const responses = functionResponsesOf(content, capture)
      // A function-response event's content is rebuilt in Rust from the
      // responses: big tool results are stringified once, not twice.
      const responsesOnly = responses !== undefined && responses.length === content.parts.length * 3 && content.role === 'user'
      const author = str(getField(event, 'author'))
      const code = getField(event, 'errorCode')
      const errorCode = code == null ? undefined : String(code)
      const message = getField(event, 'errorMessage')
      const errorMessage = message == null ? undefined : String(message)
      const contentJson = capture && content != null && !responsesOnly ? safeJson(content) : undefined
      // For a model span no afterModelCallback closed (a cached response):
      // the event is that response.
      const finishReason = str(getField(event, 'finishReason'))
      const usage = usageOf(getField(event, 'usageMetadata'))
      if (responses !== undefined && this._seen.size !== 0) this._answered(id, responses)
      const endsRun = responses !== undefined ? false : isFinalAnswer(content)
      const r = this._r
      r.event(id, author, errorCode, errorMessage, contentJson, responsesOnly, responses, finishReason, usage, endsRun)
      this._handOverSoon()
    } catch (e) {
      problem('onEventCallback', e)
    }
    return PASS
  }

  afterRunCallback(params) {
    if (this._stopped) return PASS
    try {
      const id = params?.invocationContext?.invocationId
      if (typeof id === 'string') this._finish(id, false)
    } catch (e) {
      problem('afterRunCallback', e)
    }
    return PASS
  }

  beforeAgentCallback(params) {
    if (this._stopped) return PASS
    try {
      const id = invocationIdOf(params?.callbackContext)
      const name = str(params?.agent?.name) ?? agentNameOf(params?.callbackContext)
      if (id !== undefined && name !== undefined) {
        const r = this._r
        r.agent(R.BEFORE_AGENT, id, name)
        this._handOverSoon()
      }
    } catch (e) {
      problem('beforeAgentCallback', e)
    }
    return PASS
  }

  afterAgentCallback(params) {
    if (this._stopped) return PASS
    try {
      const id = invocationIdOf(params?.callbackContext)
      const name = str(params?.agent?.name) ?? agentNameOf(params?.callbackContext)
      if (id !== undefined && name !== undefined) {
        const r = this._r
        r.agent(R.AFTER_AGENT, id, name)
        this._handOverSoon()
      }
    } catch (e) {
      problem('afterAgentCallback', e)
    }
    return PASS
  }

  // ADK 2.0.0 runs a Workflow's agents as nodes and dispatches no agent
  // callbacks for them. An agent node's afterNodeCallback is that agent
  // demonstrably finished (tracing.md, "do better" 4), once no other run of
  // it is in flight (a ParallelWorker runs one agent over several items at
  // once): its span ends then, not at the run's end. Other nodes (functions,
  // tools) have no span.
  beforeNodeCallback(params) {
    if (this._stopped) return PASS
    try {
      const at = agentNodeOf(params)
      if (at !== undefined) {
        const all = this._nodeRuns
        let runs = all.get(at.id)
        if (runs === undefined) {
          // Bounded as open runs are (a run this plugin never saw start).
          if (all.size >= this._maxOpen) all.delete(all.keys().next().value)
          all.set(at.id, (runs = new Map()))
        }
        runs.set(at.name, (runs.get(at.name) ?? 0) + 1)
      }
    } catch (e) {
      problem('beforeNodeCallback', e)
    }
    return PASS
  }

  afterNodeCallback(params) {
    if (this._stopped) return PASS
    try {
      const at = agentNodeOf(params)
      if (at === undefined) return PASS
      const runs = this._nodeRuns.get(at.id)
      const left = (runs?.get(at.name) ?? 1) - 1
      if (left > 0) {
        runs.set(at.name, left)
        return PASS
      }
      if (runs !== undefined && runs.delete(at.name) && runs.size === 0) this._nodeRuns.delete(at.id)
      const r = this._r
      r.agent(R.AGENT_NODE_DONE, at.id, at.name)
      this._handOverSoon()
    } catch (e) {
      problem('afterNodeCallback', e)
    }
    return PASS
  }

  beforeModelCallback(params) {
    if (this._stopped) return PASS
    let history
    let key
    try {
      const ctx = params?.callbackContext
      const id = invocationIdOf(ctx)
      if (id === undefined) return PASS
      this._learnTree(id, ctx)
      const agent = agentNameOf(ctx)
      const request = params?.llmRequest
      const config = request?.config
      const capture = this._capture
      let contents
      const requestContents = capture ? request?.contents : undefined
      if (requestContents != null) {
        history = this._histories
        if (history !== undefined && Array.isArray(requestContents) && typeof requestContents.toJSON !== 'function') {
          contents = history.delta(ctx, id, agent, requestContents)
          key = contents?.key
        }
        if (contents === undefined) contents = { json: safeJson(requestContents) }
      }
      const system = capture ? config?.systemInstruction : undefined
      // A string instruction (the usual one) goes as is: the native side
      // writes its JSON (a lone surrogate would not survive the crossing).
      const systemText = typeof system === 'string' && wellFormed(system) ? system : undefined
      const model = str(request?.model)
      const configText = configJson(config)
      const toolsText = this._tools.of(agent, config?.tools)
      const systemJson = system != null && systemText === undefined ? safeJson(system) : undefined
      const slot = contents?.slot ?? 0
      const r = this._r
      r.beforeModel(id, agent, model, configText, toolsText, systemJson, contents?.json, slot, contents?.reuse ?? 0, contents?.keep, systemText)
      this._handOverSoon()
    } catch (e) {
      // The native side may not hold what this side now remembers.
      if (key !== undefined) history.forgetKey(key)
      problem('beforeModelCallback', e)
    }
    return PASS
  }

  afterModelCallback(params) {
    if (this._stopped) return PASS
    try {
      const ctx = params?.callbackContext
      const id = invocationIdOf(ctx)
      const response = params?.llmResponse
      if (id === undefined || response === null || typeof response !== 'object') return PASS
      const partial = response.partial === true
      if (partial) return PASS
      const content = response.content
      const usage = usageOf(response.usageMetadata)
      const agent = agentNameOf(ctx)
      const finishReason = str(response.finishReason)
      const errorCode = response.errorCode == null ? undefined : String(response.errorCode)
      const errorMessage = response.errorMessage == null ? undefined : String(response.errorMessage)
      const contentJson = this._capture && content != null ? safeJson(content) : undefined
      // Whether an event will come that the span model takes for this
      // response (src/trace/model.rs on_event): ADK 2.0.0 sends none for a
      // response with no parts, no error code and no usage alone (LlmAgent's
      // postprocess), and the span model takes one with parts, usage or a
      // finish reason (an error code alone is also how ADK reports a failed
      // tool call, no response of the model's).
      const parts = content?.parts
      const hasParts = Array.isArray(parts) && parts.length !== 0
      const noParts = content == null || parts?.length === 0
      const sent = !noParts || !!response.errorCode || response.interrupted === true || (content == null && usage !== undefined)
      const yieldsEvent = sent && (hasParts || usage !== undefined || finishReason !== undefined)
      // gen_ai.response.id and .model, as Weave writes them.
      const responseId = str(response.interactionId)
      const responseModel = str(response.modelVersion)
      const r = this._r
      r.afterModel(id, agent, finishReason, usage, errorCode, errorMessage, contentJson, yieldsEvent, responseId, responseModel)
      this._handOverSoon()
    } catch (e) {
      problem('afterModelCallback', e)
    }
    return PASS
  }

  onModelErrorCallback(params) {
    if (this._stopped) return PASS
    try {
      const ctx = params?.callbackContext
      const id = invocationIdOf(ctx)
      if (id === undefined) return PASS
      const [type, message] = errorParts(params?.error)
      const agent = agentNameOf(ctx)
      const r = this._r
      r.modelError(id, agent, type, message)
      this._handOverSoon()
    } catch (e) {
      problem('onModelErrorCallback', e)
    }
    return PASS
  }

  beforeToolCallback(params) {
    if (this._stopped) return PASS
    try {
      const ctx = params?.toolContext
      const id = invocationIdOf(ctx)
      if (id === undefined) return PASS
      this._learnTree(id, ctx)
      const agent = agentNameOf(ctx)
      const tool = str(params?.tool?.name) ?? ''
      const callId = str(ctx?.functionCallId)
      const argsJson = this._capture ? safeJson(params?.toolArgs ?? {}) : undefined
      const r = this._r
      r.tool(R.BEFORE_TOOL, id, agent, tool, callId, argsJson)
      this._handOverSoon()
    } catch (e) {
      problem('beforeToolCallback', e)
    }
    return PASS
  }

  afterToolCallback(params) {
    if (this._stopped) return PASS
    try {
      const ctx = params?.toolContext
      const id = invocationIdOf(ctx)
      if (id === undefined) return PASS
      // Held for when no function response event reaches this plugin (a
      // long-running tool, an aborted run, an earlier plugin answering
      // onEventCallback); the event, when it comes, wins.
      const result = params?.result
      const agent = agentNameOf(ctx)
      const tool = str(params?.tool?.name) ?? ''
      const callId = str(ctx?.functionCallId)
      const token = keepsSeenResult(result, this._capture) ? this._holdSeen(id, result, callId) : 0
      const answered = retryAnsweredError(result)
      const r = this._r
      r.tool(R.AFTER_TOOL, id, agent, tool, callId, token, answered?.[0], answered?.[1])
      this._handOverSoon()
    } catch (e) {
      problem('afterToolCallback', e)
    }
    return PASS
  }

  onToolErrorCallback(params) {
    if (this._stopped) return PASS
    try {
      const ctx = params?.toolContext
      const id = invocationIdOf(ctx)
      if (id === undefined) return PASS
      const [type, message] = errorParts(params?.error)
      const agent = agentNameOf(ctx)
      const tool = str(params?.tool?.name) ?? ''
      const callId = str(ctx?.functionCallId)
      const r = this._r
      r.tool(R.TOOL_ERROR, id, agent, tool, callId, type, message)
      this._handOverSoon()
    } catch (e) {
      problem('onToolErrorCallback', e)
    }
    return PASS
  }

  /** The trace id (32 lowercase hex) of an open or one of the last 10,000
   * finished invocations, exported or not; else undefined. Never throws. */
  traceIdOf(invocationId) {
    if (typeof invocationId !== 'string') return undefined
    try {
      this._flush()
      return this._native.traceIdOf(invocationId) ?? undefined
    } catch {
      return undefined
    }
  }

  /** Ends what an invocation left open (sync, idempotent, never throws). */
  finishInterruptedInvocation(invocationId) {
    // Called unbound (`ids.forEach(tracing.finishInterruptedInvocation)`): nothing to finish.
    if (typeof invocationId !== 'string' || !(this instanceof TracingPlugin)) return
    try {
      this._finish(invocationId, true)
    } catch (e) {
      problem('finishInterruptedInvocation', e)
    }
  }

  /** Ends invocation `id`: its held results first, then the end itself,
   * handed over with the batch (at once for the console exporter). */
  _finish(id, interrupted) {
    // The AgentTool runs its end ends too (the native side knows them): their
    // held results first, and they are forgotten here with it.
    const linked = this._callers.size !== 0 && this._callers.delete(id) ? this._linkedRuns(id) : undefined
    if (this._seen.size !== 0) {
      if (linked) for (const run of linked) this._supplySeen(run)
      this._supplySeen(id)
    }
    this._r.finish(id, interrupted)
    this._forget(id)
    if (linked) {
      for (const run of linked) {
        this._forget(run)
        this._callers.delete(run)
      }
    }
    if (this._printsTraces) {
      // The console exporter prints the run's tree now, before whatever
      // the program prints next.
      this._flush()
      this._native.settle()
    } else {
      this._handOverSoon()
    }
  }

  /** A token for `result` (see SEEN_PER_INVOCATION); bounded like the
   * open invocations. */
  _holdSeen(id, result, callId) {
    let held = this._seen.get(id)
    if (held === undefined) {
      if (this._seen.size >= this._maxOpen) this._seen.delete(this._seen.keys().next().value)
      held = new Map()
      this._seen.set(id, held)
    } else if (held.size >= SEEN_PER_INVOCATION) {
      // The oldest result still unanswered gets its JSON now instead (a
      // function response event coming later still wins).
      const [token, seen] = held.entries().next().value
      held.delete(token)
      this._r.supplySeen(id, token, seenJson(seen.result, this._capture))
    }
    const token = (this._seenToken = (this._seenToken % 0xfffffffe) + 1)
    held.set(token, { result, callId })
    return token
  }

  /** An event of invocation `id` answered these calls (flat triples of
   * call id, name, JSON): their held results are not needed, as the event
   * ends their spans (the tracing thread ignores a result supplied for a
   * span that has ended). */
  _answered(id, responses) {
    const held = this._seen.get(id)
    if (held === undefined) return
    for (let i = 0; i < responses.length; i += 3) {
      const callId = responses[i]
      if (callId === '') continue
      for (const [token, seen] of held) {
        if (seen.callId === callId) held.delete(token)
      }
    }
    if (held.size === 0) this._seen.delete(id)
  }

  /** Before invocation `id` ends: the JSON of the results it still holds,
   * for the spans no function response event ended. */
  _supplySeen(id) {
    const held = this._seen.get(id)
    if (held === undefined) return
    this._seen.delete(id)
    const r = this._r
    for (const [token, seen] of held) r.supplySeen(id, token, seenJson(seen.result, this._capture))
  }

  /** The open AgentTool runs ending `id` ends with it, if any. */
  _linkedRuns(id) {
    this._flush()
    return this._native.linkedRuns(id) ?? undefined
  }

  _supplyAllSeen() {
    for (const id of [...this._seen.keys()]) this._supplySeen(id)
  }

  // Workflow roots have no agent: the tree of each agent that shows up in a
  // model or tool callback is sent then. Bounded like the open invocations.
  _noteTreeless(id) {
    const treeless = this._treeless
    treeless.add(id)
    if (treeless.size > this._maxOpen) treeless.delete(treeless.values().next().value)
  }

  _learnTree(id, ctx) {
    if (this._treeless.size === 0 || !this._treeless.has(id)) return
    const root = rootOf(ctx?.invocationContext?.agent)
    if (root === undefined) return
    this._r.addAgents(id, flattenAgentTree(root))
  }

  /** `root`'s flattened tree and its native handle (0: pass the tree whole). */
  _treeOf(root) {
    if (root === undefined || root === null || typeof root !== 'object') return NO_TREE
    // Read first: a throwing getter must not use up a handle.
    const flat = flattenAgentTree(root)
    let known = this._trees.get(root)
    // A tree that changed since it was sent is sent again.
    if (known === undefined || known.flat !== flat) {
      let handle = 0
      if (this._treeCount < MAX_TREES) {
        handle = ++this._treeCount
        this._r.registerTree(handle, flat)
      }
      known = { handle, flat }
      this._trees.set(root, known)
    }
    return known
  }

  _forget(id) {
    this._open.delete(id)
    if (this._treeless.size !== 0) this._treeless.delete(id)
    if (this._nodeRuns.size !== 0) this._nodeRuns.delete(id)
  }

  /** Emits what the exporter thread had to say (once per process for each
   * kind of problem). */
  _drainWarnings() {
    const warnings = this._native.takeWarnings()
    if (warnings) for (const [text, kind] of warnings) exportWarning(text, kind)
  }

  forceFlush() {
    if (this._stopped) return this._shutdownPromise ?? PASS
    try {
      const settle = () => {
        this._drainWarnings()
        return undefined
      }
      this._flush()
      return flushSink(this._sinkId).then(settle, settle)
    } catch (e) {
      problem('forceFlush', e)
      return PASS
    }
  }

  shutdown() {
    if (this._shutdownPromise) return this._shutdownPromise
    this._stopped = true
    this._open.clear()
    this._callers.clear()
    pinned.delete(this)
    try {
      const settle = () => {
        this._drainWarnings()
        return undefined
      }
      this._supplyAllSeen()
      this._flush()
      this._native.stop()
      this._shutdownPromise = shutdownSink(this._sinkId).then(settle, settle)
    } catch (e) {
      problem('shutdown', e)
      this._shutdownPromise = PASS
    }
    return this._shutdownPromise
  }

  getFinishedSpans() {
    let list
    this._flush()
    try {
      list = JSON.parse(this._native.finishedSpansJson())
    } catch (e) {
      problem('getFinishedSpans', e)
      return []
    }
    for (const span of list) {
      span.startTimeUnixNano = BigInt(span.startTimeUnixNano)
      span.endTimeUnixNano = BigInt(span.endTimeUnixNano)
    }
    return list
  }

  _beforeExit() {
    if (this._stopped) return
    const native = this._native
    this._supplyAllSeen()
    this._flush()
    if (native.openInvocationCount > 0) native.finishAll(true)
    this._open.clear()
    this._callers.clear()
    pinned.delete(this)
  }

  // Finishes what is open; the exit handler then stops every sink at once.
  _exit() {
    this._stopped = true
    this._supplyAllSeen()
    this._flush()
    this._native.stop()
  }
}

fillPassThroughCallbacks(TracingPlugin)

module.exports = { TracingPlugin }
