'use strict'
// The JSON of a model request's config fields that become span attributes
// (tracing.md: temperature, top_p, max_tokens, ...).
const { safeJson } = require('./json.js')

const CONFIG_KEYS = ['temperature', 'topP', 'maxOutputTokens', 'frequencyPenalty', 'presencePenalty', 'seed', 'stopSequences', 'candidateCount']

// `"key":` of each CONFIG_KEYS entry, for configJson's fast path.
const CONFIG_PREFIXES = CONFIG_KEYS.map((k) => `${JSON.stringify(k)}:`)

/** The JSON of the CONFIG_KEYS `config` sets. Usually all numbers: their
 * JSON is then built directly (the same text JSON.stringify of the picked
 * object gives: String(n) for finite numbers, else null) without an
 * intermediate object, and the same numbers as the last call's give back
 * its text (an agent sends the same config on every call); anything else
 * takes the general path. Each key is read once (a getter runs once, as
 * before), unless a getter throws: then each is read again on its own. */
function configJson(config) {
  if (config === null || typeof config !== 'object') return undefined
  try {
    return configJsonOf(config)
  } catch {
    // A getter threw: the fields that can be read, as plain values.
    const readable = {}
    for (const key of CONFIG_KEYS) {
      try {
        const v = config[key]
        if (v !== undefined) readable[key] = v
      } catch {
        // left out, as a field the config does not set
      }
    }
    return configJsonOf(readable)
  }
}

function configJsonOf(config) {
  const values = configValues
  const last = lastConfig.values
  let same = true
  for (let i = 0; i < CONFIG_KEYS.length; i++) {
    let v = config[CONFIG_KEYS[i]]
    if (v === null) v = undefined
    if (v !== undefined && typeof v !== 'number') return pickedConfigJson(config, numbersJson(values, i), i, v)
    values[i] = v
    if (v !== last[i]) same = false
  }
  if (same) return lastConfig.json
  const body = numbersJson(values, values.length)
  const json = body === undefined ? undefined : `${body}}`
  for (let i = 0; i < values.length; i++) last[i] = values[i]
  lastConfig.json = json
  return json
}

// configJson's numbers of this call, and the last all-number call's with
// its text (NaN never compares equal: such a config is built again).
const configValues = new Array(CONFIG_KEYS.length).fill(undefined)
const lastConfig = { values: new Array(CONFIG_KEYS.length).fill(undefined), json: undefined }

/** The JSON object of `values[0..end]` (numbers, or undefined for none)
 * without its closing brace, or undefined when there are none. */
function numbersJson(values, end) {
  let out
  for (let i = 0; i < end; i++) {
    const v = values[i]
    if (v === undefined) continue
    out = (out === undefined ? '{' : `${out},`) + CONFIG_PREFIXES[i] + (Number.isFinite(v) ? String(v) : 'null')
  }
  return out
}

/** configJson's general path from key `at` (value `value`) on: the
 * numbers before it come back from their JSON `out` (a non-finite one as
 * null, which stringifies the same). */
function pickedConfigJson(config, out, at, value) {
  const picked = out === undefined ? {} : JSON.parse(`${out}}`)
  picked[CONFIG_KEYS[at]] = value
  for (let i = at + 1; i < CONFIG_KEYS.length; i++) {
    const v = config[CONFIG_KEYS[i]]
    if (v !== undefined && v !== null) picked[CONFIG_KEYS[i]] = v
  }
  return safeJson(picked)
}

module.exports = { configJson }
