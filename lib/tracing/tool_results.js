'use strict'
// Tool results and function responses as the span model needs them: the
// result JSON when content is captured, else only what a retry plugin's
// answer reports (its error for the span's status).
const { isNotFoundAnswer } = require('../not_found_answer.js')
const { safeJson } = require('./json.js')
const { str } = require('./adk_reads.js')

const RETRY_RESPONSE_TYPE = 'ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN'

/** [type, message] of the thrown error a retry plugin answer (a result
 * afterToolCallback sees) reports, else undefined. An error found in a
 * result ('ToolError') never reaches this plugin's afterToolCallback as an
 * answer: the retry plugin's own answer there ends the chain. */
function retryAnsweredError(result) {
  if (result === null || typeof result !== 'object' || result.response_type !== RETRY_RESPONSE_TYPE) return undefined
  const type = typeof result.error_type === 'string' ? result.error_type : 'Error'
  if (type === 'ToolError') return undefined
  // As src/trace/retry_outcome.rs reads an answer in a function response.
  const details = result.error_details
  return [type, typeof details === 'string' ? details : details == null ? type : (safeJson(details) ?? type)]
}

/** What the span model needs of a function response: all of it when
 * captured (the tool result), else only a retry plugin response's fields. */
function responseJson(response, capture) {
  if (capture) return safeJson(response ?? {}) ?? '{}'
  if (response === null || typeof response !== 'object') return '{}'
  if (response.response_type !== RETRY_RESPONSE_TYPE) return notFoundAnswerJson(response)
  return safeJson({
    response_type: response.response_type,
    error_type: response.error_type,
    error_details: response.error_details,
    retry_count: response.retry_count,
    reflection_guidance: response.reflection_guidance,
  }) ?? '{}'
}

/** The retry plugin's answer to a tool name the model invented, past its
 * limit (retry.md), for the span model to tell apart (an error either way
 * round the plugins are registered); any other result: '{}'. */
function notFoundAnswerJson(response) {
  if (!isNotFoundAnswer(response) || Object.keys(response).length !== 1) return '{}'
  return safeJson({ error: response.error }) ?? '{}'
}

/** Whether the span model can use the result afterToolCallback saw: with
 * content capture every one (a null or undefined shows as null); without,
 * only a retry plugin response (for its fields). */
function keepsSeenResult(result, capture) {
  return capture || (result !== null && typeof result === 'object' && result.response_type === RETRY_RESPONSE_TYPE)
}

/** The JSON of a result afterToolCallback saw (tracing.md Added: made
 * JSON-safe, so a tool's `undefined` or `null` is `null`, as Weave writes it;
 * a function response event's missing response is `{}` instead). */
function seenJson(result, capture) {
  return result == null ? 'null' : responseJson(result, capture)
}

/** Flat (id, name, response JSON) triples of an event's function responses. */
function functionResponsesOf(content, capture) {
  const parts = content?.parts
  if (!Array.isArray(parts)) return undefined
  let out
  for (const part of parts) {
    const fr = part?.functionResponse
    if (fr === null || typeof fr !== 'object') continue
    ;(out ??= []).push(str(fr.id) ?? '', str(fr.name) ?? '', responseJson(fr.response, capture))
  }
  return out
}

module.exports = { retryAnsweredError, keepsSeenResult, seenJson, functionResponsesOf }
