'use strict'
// Public entry point. The engines are native (binding.js loads the addon
// built by napi-rs); lib/ holds the thin JavaScript shells that let callbacks
// a plugin does not use resolve without crossing into Rust.
const retry = require('./lib/retry.js')
const { TracingPlugin } = require('./lib/tracing.js')
const { runGuarded, guardRunner } = require('./lib/run_guarded.js')
// Loads @google/adk only when the first AgentTool is constructed.
const { AgentTool } = require('./lib/agent_tool.js')

// Assigned one by one so Node's ESM loader sees the named exports.
module.exports.ReflectAndRetryToolPlugin = retry.ReflectAndRetryToolPlugin
module.exports.TrackingScope = retry.TrackingScope
module.exports.REFLECT_AND_RETRY_RESPONSE_TYPE = retry.REFLECT_AND_RETRY_RESPONSE_TYPE
module.exports.GLOBAL_SCOPE_KEY = retry.GLOBAL_SCOPE_KEY
module.exports.TracingPlugin = TracingPlugin
module.exports.runGuarded = runGuarded
module.exports.guardRunner = guardRunner
module.exports.AgentTool = AgentTool
