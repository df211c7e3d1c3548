'use strict'
// Unregistered tool names on @google/adk 2.0.0 (retry.md): a stand-in tool
// behind each name the agent lacks, so the normal tool-error path answers it.
const { isInstance } = require('./reads.js')

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

module.exports = { MissingTool, GUARDED, guardToolsDict }
