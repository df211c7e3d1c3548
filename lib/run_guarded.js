'use strict'
// runGuarded(runner, request): yields what runner.runAsync(request) yields and,
// however the iteration ends, finishes every invocation it started on every
// plugin of the runner that has finishInterruptedInvocation.
//
// A run can throw before its first event (another plugin's
// onUserMessageCallback/beforeRunCallback, a failed session lookup), so ids
// seen on events are not enough. Each step of the inner generator runs inside
// an AsyncLocalStorage store; our plugins call noteInvocationStarted(id) from
// their first callback of a run, which records the id in the store of the
// runGuarded call that is driving it (and costs one getStore() otherwise).
const { AsyncLocalStorage } = require('node:async_hooks')

const startedInvocations = new AsyncLocalStorage()

/** Called by plugins when a run starts; records the id for runGuarded. */
function noteInvocationStarted(invocationId) {
  const ids = startedInvocations.getStore()
  if (ids !== undefined && typeof invocationId === 'string') ids.add(invocationId)
}

function pluginsOf(runner) {
  const plugins = runner?.pluginManager?.plugins
  return plugins ? Array.from(plugins) : []
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

async function* runGuarded(runner, request) {
  const ids = new Set()
  const events = startedInvocations.run(ids, () => runner.runAsync(request))
  try {
    while (true) {
      const step = await startedInvocations.run(ids, () => events.next())
      if (step.done) return step.value
      if (typeof step.value?.invocationId === 'string') ids.add(step.value.invocationId)
      yield step.value
    }
  } finally {
    try {
      // Ends the inner generator too (break, throw into us, abort): ADK's own
      // finally blocks run before the invocations are finished.
      await startedInvocations.run(ids, () => events.return(undefined))
    } catch {
      // The inner generator failing while closing changes nothing here.
    } finally {
      finishAll(runner, ids)
    }
  }
}

module.exports = { runGuarded, noteInvocationStarted }
