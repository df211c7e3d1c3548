'use strict'
// runGuarded(runner, request) and guardRunner(runner): the events of a run
// and, however the iteration ends, its invocation finished on every plugin
// of the runner that has finishInterruptedInvocation; when the iteration is
// cut short, every run started inside it too (see "Runs nest" below).
//
// A run can throw before its first event (another plugin's
// onUserMessageCallback/beforeRunCallback, a failed session lookup), so ids
// seen on events are not enough. Each step of the inner generator runs inside
// an AsyncLocalStorage store; the runner's PluginManager (watchRunStarts) and
// our plugins call noteInvocationStarted(id) as a run starts, which records
// the id in the store of the guarded run that is driving it (and costs one
// getStore() otherwise).
//
// Runs nest: an AgentTool's inner run is driven from inside its caller's step,
// and is guarded itself (lib/agent_tool.js). An id is noted in every enclosing
// store, so the outermost guard also finishes inner runs that could not end
// on their own (a consumer broke out while a parallel branch was inside one).
// Only a run cut short does that (an abort counts: ADK's generator then
// returns as if drained): a run that was drained finishes its own
// invocation alone, since any nested run still open then is not stuck but
// still going (a tool's fire-and-forget run on another runner), and closing
// it would cut its spans short and drop its retry counts mid-run.
const { AsyncLocalStorage } = require('node:async_hooks')

const startedInvocations = new AsyncLocalStorage()

/** The store of one guarded run: the ids it started, and the enclosing run's store. */
class StartedInvocations {
  constructor(outer) {
    this.ids = new Set()
    // This run's own invocation: the first id noted here, and its events'.
    this.own = new Set()
    this.outer = outer
    // Set while this run is about to call the guarded runAsync of that
    // runner (runGuarded over a guarded runner, ADK's runEphemeral): that
    // call is this run, guarded already, so each id is finished once.
    this.delegatesTo = undefined
  }
}

function note(store, invocationId) {
  for (let s = store; s !== undefined; s = s.outer) s.ids.add(invocationId)
}

/** Called by plugins when a run starts; records the id for the guarded runs driving it. */
function noteInvocationStarted(invocationId) {
  const store = startedInvocations.getStore()
  if (store !== undefined && typeof invocationId === 'string') {
    // A run's plugins note it before any tool of it can start another run.
    if (store.own.size === 0) store.own.add(invocationId)
    note(store, invocationId)
  }
}

// The runner's PluginManager is how a guard learns a run's id even when the
// run throws before any plugin of this package saw it (a plugin registered
// before them throws in onUserMessageCallback or beforeRunCallback): ADK
// hands the new InvocationContext to these two methods first. Each is
// wrapped once per PluginManager, on the instance only; outside a guarded
// run the wrapper costs one getStore().
const RUN_STARTS = ['runOnUserMessageCallback', 'runBeforeRunCallback']
const watchedManagers = new WeakSet()

function watchRunStarts(runner) {
  let manager
  try {
    manager = runner.pluginManager
    if (manager === null || typeof manager !== 'object' || watchedManagers.has(manager)) return
    watchedManagers.add(manager)
    for (const method of RUN_STARTS) {
      const original = manager[method]
      if (typeof original !== 'function') continue
      Object.defineProperty(manager, method, {
        value: function noteRunStart(params) {
          let id
          try {
            id = params?.invocationContext?.invocationId
          } catch {
            // an unreadable context: the plugins' own notes remain
          }
          noteInvocationStarted(id)
          return original.apply(this, arguments)
        },
        writable: true,
        configurable: true,
      })
    }
  } catch {
    // A frozen or foreign manager: ids come from the plugins and events.
  }
}

function pluginsOf(runner) {
  try {
    const plugins = runner?.pluginManager?.plugins
    return plugins ? Array.from(plugins) : []
  } catch {
    return []
  }
}

/** The `abortSignal` of a runAsync/runEphemeral request, when it has one. */
function signalOf(request) {
  try {
    const signal = request?.abortSignal
    return signal !== null && typeof signal === 'object' ? signal : undefined
  } catch {
    return undefined
  }
}

function aborted(signal) {
  try {
    return signal?.aborted === true
  } catch {
    return false
  }
}

function finishAll(runner, ids) {
  if (ids.size === 0) return
  for (const plugin of pluginsOf(runner)) {
    if (typeof plugin?.finishInterruptedInvocation !== 'function') continue
    for (const id of ids) {
      try {
        plugin.finishInterruptedInvocation(id)
      } catch {
        // finishInterruptedInvocation must not throw; a foreign plugin's may.
      }
    }
  }
}

/**
 * Yields what `start(store)` (a runner method's event generator) yields and
 * finishes, on every plugin of `runner`, its own invocation however the
 * iteration ends, and every invocation started meanwhile when it is cut
 * short (break, throw, or `signal`, the request's abortSignal, aborted).
 */
async function* guarded(runner, start, signal) {
  watchRunStarts(runner)
  const store = new StartedInvocations(startedInvocations.getStore())
  const events = startedInvocations.run(store, start, store)
  let drained = false
  try {
    while (true) {
      const step = await startedInvocations.run(store, () => events.next())
      if (step.done) {
        drained = true
        return step.value
      }
      const id = step.value?.invocationId
      if (typeof id === 'string') {
        store.own.add(id)
        note(store, id)
      }
      yield step.value
    }
  } finally {
    try {
      // Ends the inner generator too (break, throw into us, abort): ADK's own
      // finally blocks run before the invocations are finished.
      await startedInvocations.run(store, () => events.return(undefined))
    } catch {
      // The inner generator failing while closing changes nothing here.
    } finally {
      const finished = drained && !aborted(signal) ? store.own : store.ids
      finishAll(runner, finished)
      // Only this runner's plugins ever saw these invocations: the
      // enclosing runs need not finish them again.
      for (let s = store.outer; s !== undefined; s = s.outer) for (const id of finished) s.ids.delete(id)
    }
  }
}

// An async generator function, as api.md lists it: `yield*` hands the
// consumer's return() and throw() on to the guard's own finally.
async function* runGuarded(runner, request) {
  return yield* guarded(runner, (store) => {
    store.delegatesTo = runner
    try {
      return runner.runAsync(request)
    } finally {
      store.delegatesTo = undefined
    }
  }, signalOf(request))
}

const guardedRunners = new WeakSet()

/**
 * From now on `runner.runAsync(...)` and `runner.runEphemeral(...)` behave as
 * runGuarded does. Idempotent; returns the same runner.
 */
function guardRunner(runner) {
  if (runner === null || (typeof runner !== 'object' && typeof runner !== 'function')) {
    throw new TypeError('guardRunner: runner must be an ADK Runner.')
  }
  if (guardedRunners.has(runner)) return runner
  const runAsync = runner.runAsync
  if (typeof runAsync !== 'function') throw new TypeError('guardRunner: runner must be an ADK Runner (no runAsync method).')
  // Own properties shadow the class's methods; the originals are the ones
  // this instance had when it was guarded (an own override included).
  Object.defineProperty(runner, 'runAsync', {
    value: function runAsyncGuarded(params) {
      const store = startedInvocations.getStore()
      if (store !== undefined && store.delegatesTo === runner) {
        store.delegatesTo = undefined
        return runAsync.call(runner, params)
      }
      return guarded(runner, () => runAsync.call(runner, params), signalOf(params))
    },
    writable: true,
    configurable: true,
  })
  const runEphemeral = runner.runEphemeral
  if (typeof runEphemeral === 'function') {
    // ADK's runEphemeral runs this.runAsync, guarded by this call already.
    Object.defineProperty(runner, 'runEphemeral', {
      value: function runEphemeralGuarded(params) {
        return guarded(
          runner,
          (store) => {
            store.delegatesTo = runner // until its first runAsync call
            return runEphemeral.call(runner, params)
          },
          signalOf(params),
        )
      },
      writable: true,
      configurable: true,
    })
  }
  guardedRunners.add(runner)
  return runner
}

module.exports = { runGuarded, guardRunner, guarded, noteInvocationStarted }
