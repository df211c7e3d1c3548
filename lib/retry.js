'use strict'
// Placeholder until the retry plugin lands (issue 2).
const { fillPassThroughCallbacks } = require('./plugin_shell.js')
const TrackingScope = Object.freeze({ INVOCATION: 'invocation', GLOBAL: 'global' })
const REFLECT_AND_RETRY_RESPONSE_TYPE = 'ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN'
const GLOBAL_SCOPE_KEY = '__global_reflect_and_retry_scope__'
class ReflectAndRetryToolPlugin {
  constructor(options = {}) { this.name = options.name ?? 'reflect_retry_tool_plugin' }
  finishInterruptedInvocation() {}
}
fillPassThroughCallbacks(ReflectAndRetryToolPlugin)
module.exports = { ReflectAndRetryToolPlugin, TrackingScope, REFLECT_AND_RETRY_RESPONSE_TYPE, GLOBAL_SCOPE_KEY }
