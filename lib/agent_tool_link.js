'use strict'
// The marker between an AgentTool's inner run and the tool call that started
// it. lib/agent_tool.js builds one Runner per call and links that runner's
// PluginManager to the call; every InvocationContext of the inner run holds
// that same PluginManager, so TracingPlugin's run start finds its caller
// exactly (not by timing or async context), and no other run matches.
// Needs nothing from @google/adk.

const callers = new WeakMap()
// Whether any inner run was ever linked: until one is, a caller is looked
// up nowhere (the retry plugin asks on each new failure scope).
let anyLinked = false

/** Marks `pluginManager` (an inner runner's) as started by this call. */
function linkInnerRun(pluginManager, invocationId, functionCallId, toolName) {
  if (pluginManager === null || typeof pluginManager !== 'object' || typeof invocationId !== 'string') return
  anyLinked = true
  callers.set(
    pluginManager,
    Object.freeze({
      invocationId,
      functionCallId: typeof functionCallId === 'string' ? functionCallId : undefined,
      toolName: typeof toolName === 'string' ? toolName : undefined,
    }),
  )
}

/** The call that started the run of `invocationContext`, if an AgentTool did. */
function callerOf(invocationContext) {
  const pluginManager = invocationContext?.pluginManager
  return pluginManager !== null && typeof pluginManager === 'object' ? callers.get(pluginManager) : undefined
}

/** Whether callerOf can find anything yet. */
function innerRunsLinked() {
  return anyLinked
}

module.exports = { linkInnerRun, callerOf, innerRunsLinked }
