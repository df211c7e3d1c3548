'use strict'
// TracingPlugin: mirrors ADK callbacks into OpenTelemetry GenAI spans.
// The callbacks read the few values they need from ADK's objects and write
// them as records (lib/tracing/records.js), handed in batches to the native
// tracer, whose span model runs on a thread of its own; unused callbacks
// are the shared PASS promise. Tracing never throws into the run: every
// problem becomes one process warning per kind (lib/tracing/warnings.js).
const native = require('./native.js')
const { NativeTracer, flushSink, shutdownSink } = native
const { fillPassThroughCallbacks, PASS } = require('./plugin_shell.js')
const { noteInvocationStarted } = require('./run_guarded.js')
const { callerOf } = require('./agent_tool_link.js')
const { safeJson } = require('./tracing/json.js')
const { flattenAgentTree, rootOf } = require('./tracing/agents.js')
const { activeSpanContext } = require('./tracing/active_parent.js')
const { Histories } = require('./tracing/history.js')
const { ToolsJson } = require('./tracing/tools_json.js')
const R = require('./tracing/records.js')
const { warnOnce, exportWarning, problem } = require('./tracing/warnings.js')
const { trackForExit, pin, unpin, restartExitBudget } = require('./tracing/exit_path.js')
const { listenForRetryAnswers } = require('./retry_answers.js')
const { typeError, nativeOptions } = require('./tracing/options.js')
const { CAPTURE_RULE, VERTEX_RULE, IS_MAIN_THREAD, readEnvRules, workerValueLimits, envCapture, envFullCapture } = require('./tracing/env_rules.js')
const {
  getField,
  str,
  agentNameOf,
  agentNodeOf,
  invocationIdOf,
  errorParts,
  wellFormed,
  traceStateText,
  usageOf,
  streamsRun,
  isFinalAnswer,
} = require('./tracing/adk_reads.js')
const { configJson } = require('./tracing/config_json.js')
const { retryAnsweredError, keepsSeenResult, seenJson, functionResponsesOf } = require('./tracing/tool_results.js')
const { StartedTools } = require('./tracing/started_tools.js')

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

/** Drops from `inFlight` (an agent node's runs between beforeNodeCallback
 * and afterNodeCallback, by node context) the runs that hold their output:
 * done, or answered by another plugin's beforeNodeCallback (a node cache),
 * after which ADK calls no afterNodeCallback. Left in, such a run would
 * keep the agent's span open until the invocation ends. */
function dropFinishedNodeRuns(inFlight) {
  for (const ctx of inFlight) {
    let output
    try {
      output = ctx?.output
    } catch {
      output = undefined
    }
    if (output !== undefined) inFlight.delete(ctx)
  }
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
    // invocation id -> agent name -> node contexts of that agent's node runs in flight.
    this._nodeRuns = new Map()
    this._seenToken = 0
    // Tool calls started here whose afterToolCallback is still to come.
    this._toolsStarted = new StartedTools()
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
    trackForExit(this)
    listenForRetryAnswers(this)
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
    if (this._open.size === 0) unpin(this)
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
    pin(this)
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
    restartExitBudget()
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
        let inFlight = runs.get(at.name)
        if (inFlight === undefined) runs.set(at.name, (inFlight = new Set()))
        else dropFinishedNodeRuns(inFlight)
        inFlight.add(params.nodeContext)
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
      const inFlight = runs?.get(at.name)
      if (inFlight !== undefined) {
        inFlight.delete(params.nodeContext)
        dropFinishedNodeRuns(inFlight)
        // Another run of this agent's node is still going.
        if (inFlight.size !== 0) return PASS
        runs.delete(at.name)
        if (runs.size === 0) this._nodeRuns.delete(at.id)
      }
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
      this._startTool(id, ctx, params, str(ctx?.functionCallId), true)
      this._handOverSoon()
    } catch (e) {
      problem('beforeToolCallback', e)
    }
    return PASS
  }

  /** Opens the span of a tool call (`params`: a tool callback's);
   * `pending`: its afterToolCallback is still to come. */
  _startTool(id, ctx, params, callId, pending) {
    this._learnTree(id, ctx)
    const agent = agentNameOf(ctx)
    const tool = str(params?.tool?.name) ?? ''
    const argsJson = this._capture ? safeJson(params?.toolArgs ?? {}) : undefined
    const r = this._r
    r.tool(R.BEFORE_TOOL, id, agent, tool, callId, argsJson)
    if (pending && callId !== undefined) this._toolsStarted.start(callId)
  }

  afterToolCallback(params) {
    return this._afterTool(params, true)
  }

  /** `own`: ADK's call, not the retry plugin's announcement of its answer
   * (which comes instead of this plugin's own afterToolCallback, or after
   * it). */
  _afterTool(params, own) {
    if (this._stopped) return PASS
    try {
      const ctx = params?.toolContext
      const id = invocationIdOf(ctx)
      if (id === undefined) return PASS
      const callId = str(ctx?.functionCallId)
      const started = callId !== undefined && this._toolsStarted.done(callId)
      // A call whose beforeToolCallback an earlier plugin answered: its
      // span starts now, with the arguments the call was given.
      if (!started && own && callId !== undefined) this._startTool(id, ctx, params, callId, false)
      // Held for when no function response event reaches this plugin (a
      // long-running tool, an aborted run, an earlier plugin answering
      // onEventCallback); the event, when it comes, wins.
      const result = params?.result
      const agent = agentNameOf(ctx)
      const tool = str(params?.tool?.name) ?? ''
      // Not for a run already finished (a parallel branch's tool still
      // running when the consumer broke out): nothing would let it go.
      const token = keepsSeenResult(result, this._capture) && this._open.has(id) ? this._holdSeen(id, result, callId) : 0
      const answered = retryAnsweredError(result)
      const r = this._r
      r.tool(R.AFTER_TOOL, id, agent, tool, callId, token, answered?.[0], answered?.[1])
      this._handOverSoon()
    } catch (e) {
      problem('afterToolCallback', e)
    }
    return PASS
  }

  /** A ReflectAndRetryToolPlugin answered an error found in a tool's result
   * (lib/retry_answers.js): that answer is the result the model sees, taken
   * as this plugin's afterToolCallback would take it (the answer ended that
   * chain; the event carrying it may not come here either). Only for runs
   * this plugin traces. */
  _retryAnswered(tool, toolContext, answer) {
    if (this._traces(toolContext)) this._afterTool({ tool, toolContext, result: answer }, false)
  }

  // The retry plugin handled an error a tool threw (lib/retry_answers.js):
  // this plugin's onToolErrorCallback may not have run (the retry plugin
  // came first and answered), and its afterToolCallback may not see the
  // answer either (a plugin between them replaced it).
  _retryToolError(tool, toolContext, error) {
    if (this._traces(toolContext)) this.onToolErrorCallback({ tool, toolContext, error })
  }

  /** Whether `toolContext`'s run is one this plugin traces now (the retry
   * plugin announces to every TracingPlugin in the process). */
  _traces(toolContext) {
    if (this._stopped) return false
    const id = invocationIdOf(toolContext)
    return id !== undefined && this._open.has(id)
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
    unpin(this)
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
    unpin(this)
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
