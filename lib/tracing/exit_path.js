'use strict'
// The process-wide exit path (tracing.md "do better" 3): when the event
// loop runs dry or the process exits, every live TracingPlugin ends what
// its runs left open, then every sink delivers within one bounded budget.
const { sinksPending, flushPendingSinks, shutdownAllSinksSync } = require('../native.js')

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

/** A new plugin: reached by the exit path while the program holds it. */
function trackForExit(plugin) {
  live.add(new WeakRef(plugin))
  hookExit()
}

/** A plugin with open runs: held until they end. */
function pin(plugin) {
  pinned.add(plugin)
}

function unpin(plugin) {
  pinned.delete(plugin)
}

/** A run started after a beforeExit: the exit budget starts afresh. */
function restartExitBudget() {
  pendingSince = undefined
  beforeExitFlushes = 0
}

module.exports = { trackForExit, pin, unpin, restartExitBudget }
