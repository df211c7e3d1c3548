'use strict'
// The environment variables tracing reads as it goes (not only at
// construction): the content-capture and provider rules, the value limits.
const native = require('../native.js')

// The environment's rules of tracing.md, read for each run (a change
// between runs applies, as in ADK): bits of native.envRules. On the main
// thread process.env is the process's environment, which the native side
// reads for less than two reads through process.env cost (4-7 µs a run
// inside ADK's pipeline, where they run cold). A worker thread's
// process.env is a copy of its own: its values are read here.
const CAPTURE_RULE = 1
const VERTEX_RULE = 2
const IS_MAIN_THREAD = require('node:worker_threads').isMainThread
const readEnvRules = IS_MAIN_THREAD
  ? native.envRules
  : () => native.envRulesOf(process.env.ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS, process.env.GOOGLE_GENAI_USE_VERTEXAI)

// The attribute value length limit's variables as a worker thread sees
// them, for each batch it hands over (the native side reads the process's
// environment on the main thread). Order: src/export/config.rs
// VALUE_LIMIT_VARS.
function workerValueLimits() {
  const env = process.env
  return [env.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT ?? '', env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT ?? '']
}

/** The content-capture rule of tracing.md (env unset or empty: on). */
function envCapture() {
  return (readEnvRules() & CAPTURE_RULE) !== 0
}

/** Today's capture of every request in full (the differential test's reference). */
function envFullCapture() {
  return process.env.ADK_NATIVE_TRACING_FULL_CAPTURE === '1'
}

module.exports = { CAPTURE_RULE, VERTEX_RULE, IS_MAIN_THREAD, readEnvRules, workerValueLimits, envCapture, envFullCapture }
