'use strict'
// The JSON of a model request's `config.tools`, remembered per agent. An
// agent declares the same tools on every model call, and ADK builds them
// anew each time, so the JSON text cannot be reused by identity; checking
// the new value against the last one's JSON tokens (json_tokens.js) is
// exact and costs a fraction of serialising it again (one declared
// function: 0.45 µs against 2.1 µs, Node 20). A value the check does not
// support, or tools that keep changing, are serialised as before.

const { record, match } = require('./json_tokens.js')
const { safeJson } = require('./json.js')

/** Agents remembered (the oldest is forgotten past this). */
const MAX_AGENTS = 64
/** Misses in a row after which an agent's tools are no longer checked:
 * they change on every call, and the check would only add its cost. */
const MAX_MISSES = 4

/** Whether `tools` declares functions (else the span shows no tools). */
function declaresFunctions(tools) {
  for (const t of tools) {
    const decls = t?.functionDeclarations
    if (Array.isArray(decls) && decls.length > 0) return true
  }
  return false
}

class ToolsJson {
  /** `check` false: every call serialises (the full capture the
   * differential test compares against). */
  constructor(check = true) {
    this._check = check
    // agent name -> { tokens (undefined: not checked), json, misses }
    this._byAgent = new Map()
    // Calls whose JSON was reused (for the tests).
    this.reused = 0
  }

  /** The JSON of `tools` (a request's config.tools) of `agent`'s model
   * call when it declares functions, else undefined. */
  of(agent, tools) {
    if (!Array.isArray(tools)) return undefined
    if (!this._check) return serialised(tools)
    const key = agent ?? ''
    let last = this._byAgent.get(key)
    if (last === undefined) {
      if (this._byAgent.size >= MAX_AGENTS) this._byAgent.delete(this._byAgent.keys().next().value)
      last = { tokens: undefined, json: undefined, misses: 0 }
      this._byAgent.set(key, last)
    } else if (last.misses >= MAX_MISSES) {
      return serialised(tools)
    } else if (last.tokens !== undefined) {
      let end = -1
      try {
        end = match(tools, last.tokens, 0, 1)
      } catch {
        // A throwing getter: the serialisation below sanitises it.
      }
      if (end === last.tokens.length) {
        last.misses = 0
        this.reused++
        return last.json
      }
      last.misses++
    }
    const json = serialised(tools)
    let tokens = []
    try {
      if (!record(tools, tokens, 1)) tokens = undefined
    } catch {
      tokens = undefined
    }
    // A value the check cannot hold counts as a miss too.
    if (tokens === undefined) last.misses++
    last.tokens = tokens
    last.json = json
    return json
  }
}

function serialised(tools) {
  return declaresFunctions(tools) ? safeJson(tools) : undefined
}

module.exports = { ToolsJson }
