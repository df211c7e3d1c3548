// The JavaScript comparator for the export benchmark: the project's Weave-style
// ADK tracing plugin (weave_style_plugin.mjs: OpenTelemetry JS SDK, BasePlugin
// callbacks opening invoke_agent / chat / execute_tool spans with GenAI
// attributes, the reference's JSON-safe copy + JSON.stringify on the JavaScript
// thread) wired the way W&B Weave ships it: a BatchSpanProcessor feeding the
// OTLP/HTTP protobuf exporter (@opentelemetry/exporter-trace-otlp-proto), with a
// Resource. It also writes the root span's output messages at the end of the run
// (as the reference and TracingPlugin do), so both pipelines do the same work.
// Written for this benchmark; not Weave's code.
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { WeaveStylePlugin, toJsonSafe } from './weave_style_plugin.mjs'

export { toJsonSafe }

function role(r) {
  if (!r) return 'assistant'
  return r === 'model' ? 'assistant' : r
}

function outputParts(content) {
  const out = []
  for (const p of content?.parts ?? []) {
    if (p.functionCall) out.push({ type: 'tool_call', id: p.functionCall.id ?? '', name: p.functionCall.name ?? '', arguments: toJsonSafe(p.functionCall.args ?? {}) })
    else if (p.functionResponse) out.push({ type: 'tool_call_response', id: p.functionResponse.id ?? '', response: toJsonSafe(p.functionResponse.response ?? {}) })
    else if (p.inlineData) out.push({ type: 'blob', mime_type: p.inlineData.mimeType ?? '' })
    else if (p.text != null) out.push({ type: 'text', content: String(p.text) })
  }
  return out
}

export class OtelJsPipelinePlugin extends WeaveStylePlugin {
  /**
   * @param {{ endpoint: string, serviceName?: string, headers?: Record<string,string>,
   *           compression?: 'gzip' | 'none',
   *           batch?: { maxQueueSize?: number, maxExportBatchSize?: number, scheduledDelayMillis?: number, exportTimeoutMillis?: number } }} options
   */
  constructor({ endpoint, serviceName = 'adk-bench', headers, compression, batch = {} } = {}) {
    // forceFlush exports every queued batch at once: with a queue raised past
    // the default (the benchmark's, so nothing is dropped) the exporter's
    // default limit of 30 concurrent exports would reject the flush itself.
    const concurrencyLimit = Math.max(30, Math.ceil((batch.maxQueueSize ?? 2048) / (batch.maxExportBatchSize ?? 512)) + 1)
    const exporter = new OTLPTraceExporter({ url: endpoint, headers, concurrencyLimit, ...(compression ? { compression } : {}) })
    super({ name: 'otel_js_pipeline', exporter })
    // The base class builds a resource-less provider with default batching;
    // replace it (it has seen no span) with the shipped configuration.
    this.provider.shutdown().catch(() => {})
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': serviceName }),
      spanProcessors: [new BatchSpanProcessor(exporter, batch)],
    })
    this.tracer = this.provider.getTracer('weave-style-adk')
    this.lastContent = new Map() // invocationId -> last non-partial event content
  }

  async onEventCallback({ invocationContext, event }) {
    if (!event?.partial && event?.content && this.invocations.has(invocationContext.invocationId)) {
      this.lastContent.set(invocationContext.invocationId, event.content)
    }
    return undefined
  }

  async afterRunCallback(params) {
    const id = params.invocationContext.invocationId
    const st = this.invocations.get(id)
    const content = this.lastContent.get(id)
    this.lastContent.delete(id)
    if (st && content && this.captureContent) {
      st.root.setAttribute('gen_ai.output.messages', JSON.stringify(toJsonSafe([{ role: role(content.role), parts: outputParts(content), finish_reason: 'stop' }])))
      st.root.setAttribute('gen_ai.output.type', 'text')
    }
    return super.afterRunCallback(params)
  }
}
