'use strict'
// Placeholder until runGuarded lands (issue 2).
async function* runGuarded(runner, request) {
  yield* runner.runAsync(request)
}
module.exports = { runGuarded }
