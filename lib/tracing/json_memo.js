'use strict'
// The last JSON of a small value per key (an agent's tool declarations or
// system instruction), reused while the value still walks to the same
// tokens (json_tokens.js): unchanged values are not serialised again.
const { record, match } = require('./json_tokens.js')

const MAX_KEYS = 64

class JsonMemo {
  constructor() {
    this._map = new Map()
  }

  /** `toJson(value)`, or the remembered result when `value` is unchanged. */
  json(key, value, toJson) {
    const map = this._map
    const hit = map.get(key)
    if (hit !== undefined && match(value, hit.tokens, 0, 0) === hit.tokens.length) return hit.json
    const json = toJson(value)
    const tokens = []
    if (record(value, tokens, 0)) {
      if (hit === undefined && map.size >= MAX_KEYS) map.delete(map.keys().next().value)
      map.set(key, { tokens, json })
    } else if (hit !== undefined) {
      map.delete(key)
    }
    return json
  }
}

module.exports = { JsonMemo }
