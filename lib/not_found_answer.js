'use strict'
// ReflectAndRetryToolPlugin's answer to a tool name the model invented, past
// its limit (retry.md): `{ error: "Invoking `<name>()` failed as no tool
// with that name is available. …" }`. The retry plugin must not count it as
// a success when it comes back; the tracing plugin tells it apart from a
// tool's own result. The text itself is built in src/retry/guidance.rs.

const NOT_FOUND_PREFIX = 'Invoking `'
const NOT_FOUND_MARK = '()` failed as no tool with that name is available.'

/** Whether `result` (an object) carries that answer's text as its `error`. */
function isNotFoundAnswer(result) {
  const text = result.error
  return typeof text === 'string' && text.startsWith(NOT_FOUND_PREFIX) && text.includes(NOT_FOUND_MARK)
}

module.exports = { isNotFoundAnswer }
