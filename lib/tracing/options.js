'use strict'
// TracingPlugin's options, checked where the user gave them (api.md: a
// TypeError naming the option) and turned into the native tracer's.
const { IS_MAIN_THREAD } = require('./env_rules.js')

function typeError(message) {
  return new TypeError(`TracingPlugin: ${message}`)
}

function optionalString(options, key) {
  const v = options[key]
  if (v !== undefined && typeof v !== 'string') throw typeError(`option '${key}' must be a string.`)
  return v
}

function stringRecord(options, key) {
  const v = options[key]
  if (v === undefined) return undefined
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw typeError(`option '${key}' must be an object of strings.`)
  const out = []
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') throw typeError(`option '${key}.${k}' must be a string.`)
    out.push([k, val])
  }
  return out
}

function nonNegativeInt(value, label, { positive = false, max = 0xffffffff } = {}) {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (positive ? 1 : 0) || value > max) {
    const most = value > max ? ` no greater than ${max}` : ''
    throw typeError(`option '${label}' must be a ${positive ? 'positive' : 'non-negative'} integer${most}.`)
  }
  return value
}

function nativeOptions(options) {
  const weave = options.weave
  if (weave !== undefined && (weave === null || typeof weave !== 'object')) throw typeError("option 'weave' must be an object.")
  if (weave !== undefined) {
    if (typeof weave.project !== 'string') throw typeError("option 'weave.project' must be a string ('entity/project').")
    for (const k of ['apiKey', 'baseUrl']) {
      if (weave[k] !== undefined && typeof weave[k] !== 'string') throw typeError(`option 'weave.${k}' must be a string.`)
    }
  }
  const batch = options.batch
  if (batch !== undefined && (batch === null || typeof batch !== 'object')) throw typeError("option 'batch' must be an object.")
  const exporter = options.exporter
  if (exporter !== undefined && typeof exporter !== 'string') throw typeError("option 'exporter' must be 'otlp', 'console', 'memory' or 'none'.")
  return {
    exporter,
    endpoint: optionalString(options, 'endpoint'),
    headers: stringRecord(options, 'headers'),
    weave: weave && { project: weave.project, apiKey: weave.apiKey, baseUrl: weave.baseUrl },
    serviceName: optionalString(options, 'serviceName'),
    resourceAttributes: stringRecord(options, 'resourceAttributes'),
    batch: batch && {
      maxQueueSize: nonNegativeInt(batch.maxQueueSize, 'batch.maxQueueSize', { positive: true }),
      maxExportBatchSize: nonNegativeInt(batch.maxExportBatchSize, 'batch.maxExportBatchSize', { positive: true }),
      scheduledDelayMillis: nonNegativeInt(batch.scheduledDelayMillis, 'batch.scheduledDelayMillis'),
      // A batch needs some time to be sent: 0 is refused (as OTEL_BSP_EXPORT_TIMEOUT=0 is).
      exportTimeoutMillis: nonNegativeInt(batch.exportTimeoutMillis, 'batch.exportTimeoutMillis', { positive: true }),
    },
    maxOpenInvocations: nonNegativeInt(options.maxOpenInvocations, 'maxOpenInvocations', { positive: true }),
    stdoutIsTty: process.stdout?.isTTY === true,
    exitFlushTimeoutMillis: nonNegativeInt(options.exitFlushTimeoutMillis, 'exitFlushTimeoutMillis'),
    environment: IS_MAIN_THREAD ? undefined : workerEnvironment(),
  }
}

/** A worker thread's own environment, for the exporter's configuration
 * (OTEL_*, WANDB_*, NO_COLOR…): its process.env, not the process's. */
function workerEnvironment() {
  const vars = {}
  for (const [k, v] of Object.entries(process.env)) if (typeof v === 'string') vars[k] = v
  return vars
}

module.exports = { typeError, nativeOptions }
