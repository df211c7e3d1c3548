'use strict'
// Shared by both plugin classes: the 17 callback names of @google/adk 2.0.0's
// BasePlugin and a pass-through for those a plugin does not use. A callback
// that passes returns one pre-resolved Promise of `undefined`, so ADK's
// `await` costs what a plain JavaScript no-op costs, with no call into Rust.

const CALLBACK_NAMES = Object.freeze([
  'onUserMessageCallback',
  'beforeRunCallback',
  'onEventCallback',
  'afterRunCallback',
  'beforeAgentCallback',
  'afterAgentCallback',
  'beforeNodeCallback',
  'afterNodeCallback',
  'beforeModelCallback',
  'afterModelCallback',
  'onModelErrorCallback',
  'beforeToolSelection',
  'beforeContextCompaction',
  'afterContextCompaction',
  'beforeToolCallback',
  'afterToolCallback',
  'onToolErrorCallback',
])

// A settled Promise is immutable, so one instance can answer every call.
const PASS = Promise.resolve(undefined)

function pass() {
  return PASS
}

/** Gives `Class.prototype` a pass-through for every callback it does not define. */
function fillPassThroughCallbacks(Class) {
  for (const name of CALLBACK_NAMES) {
    if (!Object.prototype.hasOwnProperty.call(Class.prototype, name)) {
      Object.defineProperty(Class.prototype, name, { value: pass, writable: true, configurable: true })
    }
  }
}

module.exports = { CALLBACK_NAMES, PASS, pass, fillPassThroughCallbacks }
