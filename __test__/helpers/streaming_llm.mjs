// A BaseLlm that streams like ADK's Gemini model: each model call is a list
// of raw GenerateContentResponse chunks. With `stream` (runConfig.streamingMode
// SSE) they go through ADK 2.0.0's own StreamingResponseAggregator, exactly
// as models/google_llm.js does (partial text chunks; the accumulated text as
// a non-partial response when a function call arrives, then the call; from
// close() the rest, or a usage-only response). Without `stream`, one response
// of the whole call, as generateContent would give.
import { BaseLlm } from '@google/adk'
import { adkMajor } from './adk_version.mjs'
// The aggregator is not exported; ADK 2's "./dist/web/*" export holds the same code. ADK 1.x
// has no such export: there the streamed tests skip (needsAdk2).
const { StreamingResponseAggregator } = adkMajor >= 2 ? await import('@google/adk/dist/web/utils/streaming_utils.js') : {}

/** One raw chunk: `parts`, and optionally finishReason and usage. */
export function chunk(parts, { finishReason, usage } = {}) {
  return {
    candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }],
    ...(usage ? { usageMetadata: usage } : {}),
  }
}

export class StreamingLlm extends BaseLlm {
  /**
   * @param {Array<Array<object>>} calls one list of chunks per model call; an
   *   entry may be `{ wait: ms }` (a pause of the stream) instead of a chunk.
   *   Past the end the model answers 'done'.
   */
  constructor(calls, { model = 'streaming-model' } = {}) {
    super({ model })
    this.calls = [...calls]
  }

  async *generateContentAsync(llmRequest, stream = false) {
    const chunks = this.calls.length ? this.calls.shift() : [chunk([{ text: 'done' }], { finishReason: 'STOP' })]
    if (stream) {
      const aggregator = new StreamingResponseAggregator(false)
      for (const c of chunks) {
        if (c.wait) {
          await new Promise((r) => setTimeout(r, c.wait))
          continue
        }
        for await (const r of aggregator.processResponse(c)) yield r
      }
      const last = aggregator.close()
      if (last) yield last
      return
    }
    const parts = []
    let finishReason
    let usageMetadata
    for (const c of chunks) {
      if (c.wait) continue
      parts.push(...(c.candidates?.[0]?.content?.parts ?? []).filter((p) => p.text !== ''))
      finishReason = c.candidates?.[0]?.finishReason ?? finishReason
      usageMetadata = c.usageMetadata ?? usageMetadata
    }
    yield { content: { role: 'model', parts }, finishReason, usageMetadata }
  }

  async connect() {
    throw new Error('StreamingLlm does not support live connections')
  }
}
