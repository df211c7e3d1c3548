'use strict'
// What the callbacks read from ADK, written as records and applied by the
// native tracer in one call per batch (src/js/tracing/records.rs says why
// and how a record is laid out): numbers go into one Float64Array, strings
// into one string, and each string field is its length there (-1: none;
// -2 - i: the i-th string of `big`, for long ones; SAME + i: a repeat).
//
// Repeats are sent once per batch. Most of what a run writes is: its id in
// every record, its agent's and tools' names, and each model call's tool
// declarations, system instruction and config (about 70% of an S1
// lifecycle's text). A key field repeats one of the last KEYS keys of the
// batch; a `same` field repeats its own slot's last value. The native
// reader (src/js/tracing/fields.rs) keeps the same keys and slots, reading
// the same fields in the same order, so both always agree.

// Record kinds; src/js/tracing/records.rs has the same numbers.
const START = 1
const BEFORE_AGENT = 2
const AFTER_AGENT = 3
const BEFORE_MODEL = 4
const AFTER_MODEL = 5
const MODEL_ERROR = 6
const BEFORE_TOOL = 7
const AFTER_TOOL = 8
const TOOL_ERROR = 9
const EVENT = 10
const FINISH = 11
const LINK = 12
const ADD_AGENTS = 13
const FORGET_HISTORY = 14
const SUPPLY_SEEN = 15
const REGISTER_TREE = 16
const AGENT_NODE_DONE = 17

/** Strings longer than this go on their own. */
const BIG = 1024
/** A string field written as SAME + i repeats an earlier one of the batch. */
const SAME = 2 ** 40
/** How many recent keys a key field can repeat (fields.rs: KEYS). */
const KEYS = 4
// beforeModel's fields that mostly repeat, each its own slot (fields.rs).
const SAME_MODEL = 0
const SAME_CONFIG = 1
const SAME_TOOLS = 2
const SAME_SYSTEM_JSON = 3
const SAME_SYSTEM_TEXT = 4
const SLOTS = 5
/** A batch this big goes at the end of the callback that made it so
 * (else at the end of a run): bounded memory, and one hand-over per run. */
const MAX_NUMS = 4096
const MAX_TEXT = 64 * 1024
const MAX_BIG_CHARS = 4 * 1024 * 1024

const now = () => performance.now()

/** The usageMetadata counts a record holds, in order. */
const USAGE_KEYS = ['promptTokenCount', 'candidatesTokenCount', 'totalTokenCount', 'thoughtsTokenCount', 'cachedContentTokenCount']

class Records {
  constructor() {
    this.nums = new Float64Array(1024)
    this.n = 0
    this.text = ''
    this.big = []
    this.bigChars = 0
    // The batch's last KEYS keys (written round robin) and each slot's last value.
    this.keys = new Array(KEYS).fill(undefined)
    this.keyAt = 0
    this.last = new Array(SLOTS).fill(undefined)
  }

  /** Starts a record of `kind` with room for `size` more numbers. */
  begin(kind, size) {
    if (this.n + size + 2 > this.nums.length) this._grow(size + 2)
    this.nums[this.n++] = kind
    this.nums[this.n++] = now()
  }

  num(v) {
    this.nums[this.n++] = v
  }

  flag(v) {
    this.nums[this.n++] = v === true ? 1 : 0
  }

  /** true/false, or none for anything else. */
  optFlag(v) {
    this.nums[this.n++] = v === true ? 1 : v === false ? 0 : -1
  }

  str(s) {
    if (typeof s !== 'string') {
      this.nums[this.n++] = -1
    } else if (s.length > BIG) {
      this.nums[this.n++] = -2 - this.big.length
      this.big.push(s)
      this.bigChars += s.length
    } else {
      this.nums[this.n++] = s.length
      this.text += s
    }
  }

  /** A string the native tracer keeps as a key (never sent apart). */
  key(s) {
    if (typeof s !== 'string') {
      this.nums[this.n++] = -1
      return
    }
    const keys = this.keys
    for (let i = 0; i < KEYS; i++) {
      if (keys[i] === s) {
        this.nums[this.n++] = SAME + i
        return
      }
    }
    this.nums[this.n++] = s.length
    this.text += s
    keys[this.keyAt] = s
    this.keyAt = (this.keyAt + 1) % KEYS
  }

  /** A string that is mostly slot `slot`'s last value: sent once per batch. */
  same(s, slot) {
    if (typeof s === 'string' && s === this.last[slot]) {
      this.nums[this.n++] = SAME
      return
    }
    this.str(s)
    this.last[slot] = s
  }

  /** Flat 5-tuples of lib/tracing/agents.js (their count first). */
  agents(flat) {
    const count = Array.isArray(flat) ? Math.floor(flat.length / 5) : 0
    // Room for the tuples and for the rest of the record they are in.
    if (this.n + count * 5 + 32 > this.nums.length) this._grow(count * 5 + 32)
    this.nums[this.n++] = count
    for (let i = 0; i < count * 5; i += 5) {
      this.key(flat[i])
      this.key(flat[i + 1])
      this.str(flat[i + 2])
      this.str(flat[i + 3])
      this.str(flat[i + 4])
    }
  }

  // ---- one method per kind: the fields in the order records.rs reads them

  start(id, sessionId, appName, userId, rootName, rootDescription, tree, flat, userJson, capture, vertex, traceId, spanId, sampled, isRemote, traceState, streams) {
    this.begin(START, 17)
    this.key(id)
    this.str(sessionId)
    this.str(appName)
    this.str(userId)
    this.str(rootName)
    this.str(rootDescription)
    this.num(tree)
    this.agents(flat)
    this.str(userJson)
    this.flag(capture)
    this.flag(vertex)
    this.str(traceId)
    this.str(spanId)
    this.optFlag(sampled)
    this.flag(isRemote)
    this.str(traceState)
    this.flag(streams)
  }

  /** `kind`: BEFORE_AGENT, AFTER_AGENT or AGENT_NODE_DONE. */
  agent(kind, id, name) {
    this.begin(kind, 2)
    this.key(id)
    this.key(name)
  }

  beforeModel(id, agent, model, configJson, toolsJson, systemJson, contentsJson, slot, reuse, keep, systemText) {
    this.begin(BEFORE_MODEL, 11)
    this.key(id)
    this.key(agent)
    this.same(model, SAME_MODEL)
    this.same(configJson, SAME_CONFIG)
    this.same(toolsJson, SAME_TOOLS)
    this.same(systemJson, SAME_SYSTEM_JSON)
    this.str(contentsJson)
    this.num(slot)
    this.num(reuse)
    this.optFlag(keep)
    this.same(systemText, SAME_SYSTEM_TEXT)
  }

  /** `usage`: the response's usageMetadata object, or undefined. */
  afterModel(id, agent, finishReason, usage, errorCode, errorMessage, contentJson, yieldsEvent, responseId, responseModel) {
    this.begin(AFTER_MODEL, 16)
    this.key(id)
    this.key(agent)
    this.flag(false) // partial responses are not recorded
    this.str(finishReason)
    this.usage(usage)
    this.str(errorCode)
    this.str(errorMessage)
    this.str(contentJson)
    this.flag(yieldsEvent)
    this.str(responseId)
    this.str(responseModel)
  }

  modelError(id, agent, type, message) {
    this.begin(MODEL_ERROR, 4)
    this.key(id)
    this.key(agent)
    this.str(type)
    this.str(message)
  }

  /** `last`: the arguments' JSON (BEFORE_TOOL), the held result's token
   * (AFTER_TOOL); TOOL_ERROR takes the error's type and message, and
   * AFTER_TOOL those of a failure a retry plugin's answer reports. */
  tool(kind, id, agent, tool, callId, last, message, answeredMessage) {
    this.begin(kind, 7)
    this.key(id)
    this.key(agent)
    this.key(tool)
    this.key(callId)
    if (kind === AFTER_TOOL) {
      this.num(last)
      this.str(message)
      this.str(answeredMessage)
    } else {
      this.str(last)
      if (kind === TOOL_ERROR) this.str(message)
    }
  }

  /** `responses`: flat (call id, name, response JSON) triples, or
   * undefined; `usage`: the event's usageMetadata object, or undefined;
   * `endsRun`: the author's final answer (src/trace/inputs.rs EventInfo). */
  event(id, author, errorCode, errorMessage, contentJson, responsesOnly, responses, finishReason, usage, endsRun) {
    const triples = responses === undefined ? 0 : responses.length - (responses.length % 3)
    this.begin(EVENT, 16 + triples)
    this.key(id)
    this.key(author)
    this.flag(false) // partial events are not recorded
    this.str(errorCode)
    this.str(errorMessage)
    this.str(contentJson)
    this.flag(responsesOnly)
    this.num(triples / 3)
    for (let i = 0; i < triples; i += 3) {
      this.key(responses[i])
      this.key(responses[i + 1])
      this.str(responses[i + 2])
    }
    this.str(finishReason)
    this.usage(usage)
    this.optFlag(endsRun)
  }

  /** A usageMetadata object's counts (prompt, candidates, total, thoughts,
   * cached; NaN: none) after a flag, or only the flag without one. */
  usage(usage) {
    if (usage === undefined) {
      this.nums[this.n++] = 0
      return
    }
    this.nums[this.n++] = 1
    const start = this.n
    try {
      this.count(usage.promptTokenCount)
      this.count(usage.candidatesTokenCount)
      this.count(usage.totalTokenCount)
      this.count(usage.thoughtsTokenCount)
      this.count(usage.cachedContentTokenCount)
    } catch {
      // A getter threw: each count again on its own, a throwing one as none,
      // so the record keeps its layout (a half-written record would spoil
      // the whole batch, other runs' records included).
      this.n = start
      for (const key of USAGE_KEYS) {
        let v
        try {
          v = usage[key]
        } catch {
          v = undefined
        }
        this.count(v)
      }
    }
  }

  count(v) {
    this.nums[this.n++] = typeof v === 'number' ? v : NaN
  }

  finish(id, interrupted) {
    this.begin(FINISH, 2)
    this.key(id)
    this.flag(interrupted)
  }

  link(id, parentId, callId, toolName) {
    this.begin(LINK, 4)
    this.key(id)
    this.key(parentId)
    this.key(callId)
    this.key(toolName)
  }

  addAgents(id, flat) {
    this.begin(ADD_AGENTS, 2)
    this.key(id)
    this.agents(flat)
  }

  /** The JSON of a result afterToolCallback saw (token `token`). */
  supplySeen(id, token, json) {
    this.begin(SUPPLY_SEEN, 3)
    this.key(id)
    this.num(token)
    this.str(json)
  }

  /** Flat 5-tuples of an agent tree, kept under `handle` (1, 2, ...). */
  registerTree(handle, flat) {
    this.begin(REGISTER_TREE, 1)
    this.num(handle)
    this.agents(flat)
  }

  forgetHistory(slot) {
    this.begin(FORGET_HISTORY, 1)
    this.num(slot)
  }

  /** Whether the batch should go now. */
  get full() {
    return this.n > MAX_NUMS || this.text.length > MAX_TEXT || this.bigChars > MAX_BIG_CHARS
  }

  /** Hands the batch to `apply(nums, count, text, big, now)`, returning its answer. */
  take(apply) {
    const { nums, n, text, big } = this
    this.n = 0
    this.text = ''
    const keys = this.keys
    for (let i = 0; i < KEYS; i++) keys[i] = undefined
    this.keyAt = 0
    const last = this.last
    for (let i = 0; i < SLOTS; i++) last[i] = undefined
    if (big.length !== 0) {
      this.big = []
      this.bigChars = 0
    }
    return apply(nums, n, text, big.length === 0 ? undefined : big, now())
  }

  _grow(size) {
    let length = this.nums.length * 2
    while (length < this.n + size) length *= 2
    const nums = new Float64Array(length)
    nums.set(this.nums.subarray(0, this.n))
    this.nums = nums
  }
}

module.exports = { Records, BEFORE_AGENT, AFTER_AGENT, AGENT_NODE_DONE, BEFORE_TOOL, AFTER_TOOL, TOOL_ERROR }
