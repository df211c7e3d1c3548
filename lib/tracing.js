'use strict'
// Placeholder until the tracing plugin lands (issue 3).
const { fillPassThroughCallbacks } = require('./plugin_shell.js')
class TracingPlugin {
  constructor(options = {}) { this.name = options.name ?? 'tracing_plugin' }
  finishInterruptedInvocation() {}
}
fillPassThroughCallbacks(TracingPlugin)
module.exports = { TracingPlugin }
