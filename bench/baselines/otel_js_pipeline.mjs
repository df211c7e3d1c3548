// The JavaScript comparator for the export benchmark: an ADK tracing plugin
// built the way W&B Weave's ADK plugin is — the OpenTelemetry JS SDK, BasePlugin
// callbacks that open invoke_agent / chat / execute_tool spans with GenAI
// attributes, a JSON-safe deep copy of every payload serialised with
// JSON.stringify on the JavaScript thread, and a BatchSpanProcessor feeding the
// OTLP/HTTP protobuf exporter (@opentelemetry/exporter-trace-otlp-proto).
//
// It is a cost model of that design, not a product: it produces the same span
// tree and attribute set as TracingPlugin for the benchmark's scripted runs
// (root, agent, chat, execute_tool, chat) so the two pipelines do the same work.
import { BasePlugin } from '@google/adk'
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'

const provider = () => (String(process.env.GOOGLE_GENAI_USE_VERTEXAI ?? '').toLowerCase() === 'true' ? 'vertex_ai' : 'gemini')

/** A JSON-safe deep copy the way the reference does it (a `seen` set: shared references also become "[Circular]"). */
export function toJsonSafe(value, seen = new WeakSet()) {
  if (value === null || value === undefined) return value ?? null
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value
    case 'bigint':
      return value.toString()
    case 'function':
    case 'symbol':
      return null
    default:
  }
  if (seen.has(value)) return '[Circular]'
  seen.add(value)
  if (Array.isArray(value)) return value.map((v) => toJsonSafe(v, seen))
  if (value instanceof Uint8Array) return `<${value.length} bytes>`
  if (value instanceof Date) return value.toISOString()
  const out = {}
  for (const [k, v] of Object.entries(value)) {
    if (v !== undefined) out[k] = toJsonSafe(v, seen)
  }
  return out
}

function role(r, fallback) {
  if (r === 'model') return 'assistant'
  return r ?? fallback
}

function parts(content) {
  const out = []
  for (const p of content?.parts ?? []) {
    if (p.text !== undefined) out.push({ type: 'text', content: p.text })
    else if (p.functionCall) out.push({ type: 'tool_call', id: p.functionCall.id ?? '', name: p.functionCall.name ?? '', arguments: p.functionCall.args ?? {} })
    else if (p.functionResponse) out.push({ type: 'tool_call_response', id: p.functionResponse.id ?? '', response: p.functionResponse.response ?? {} })
    else if (p.inlineData) out.push({ type: 'blob', mime_type: p.inlineData.mimeType })
  }
  return out
}

const inputMessages = (contents) => JSON.stringify(toJsonSafe(contents.map((c) => ({ role: role(c.role, ''), parts: parts(c) }))))
const outputMessages = (content, finish) =>
  JSON.stringify(toJsonSafe([{ role: role(content?.role, 'assistant'), parts: parts(content), finish_reason: finish }]))

function agentNameOf(ctx) {
  try {
    return ctx.agentName
  } catch {
    return undefined
  }
}

export class OtelJsTracingPlugin extends BasePlugin {
  /**
   * @param {{ endpoint: string, serviceName?: string, headers?: Record<string,string>,
   *           batch?: { maxQueueSize?: number, maxExportBatchSize?: number, scheduledDelayMillis?: number, exportTimeoutMillis?: number },
   *           compression?: 'gzip' | 'none' }} options
   */
  constructor({ endpoint, serviceName = 'adk-bench', headers, batch = {}, compression } = {}) {
    super('otel_js_tracing')
    this.exporter = new OTLPTraceExporter({ url: endpoint, headers, ...(compression ? { compression } : {}) })
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': serviceName }),
      spanProcessors: [new BatchSpanProcessor(this.exporter, batch)],
    })
    this.tracer = this.provider.getTracer('otel-js-adk-comparator', '0.0.0')
    this.invocations = new Map()
  }

  state(invocationId) {
    return this.invocations.get(invocationId)
  }

  agentSpan(st, agentName) {
    let span = st.agents.get(agentName)
    if (!span) {
      const agent = st.rootAgent?.findAgent?.(agentName) ?? null
      span = this.tracer.startSpan(`invoke_agent ${agentName}`, {
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.provider.name': provider(),
          'gen_ai.conversation.id': st.sessionId,
          'gen_ai.agent.name': agentName,
          'gen_ai.agent.id': st.invocationId,
          'gen_ai.agent.description': agent?.description ?? '',
          ...(typeof agent?.model === 'string' ? { 'gen_ai.request.model': agent.model } : {}),
        },
      }, st.rootCtx)
      st.agents.set(agentName, span)
    }
    return span
  }

  async beforeRunCallback({ invocationContext: ic }) {
    const agent = ic.agent
    const name = agent?.name ? `invoke_agent ${agent.name}` : 'invoke_agent'
    const root = this.tracer.startSpan(name, {
      root: true,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.provider.name': provider(),
        'gen_ai.conversation.id': ic.session?.id ?? '',
        'gen_ai.agent.id': ic.invocationId,
        'weave.google_adk.invocation_id': ic.invocationId,
        'gen_ai.agent.name': agent?.name ?? '',
        'gen_ai.agent.description': agent?.description ?? '',
        'weave.google_adk.app_name': ic.appName ?? '',
        'weave.google_adk.user_id': ic.userId ?? '',
        'gen_ai.input.messages': inputMessages(ic.userContent ? [ic.userContent] : []),
      },
    }, ROOT_CONTEXT)
    this.invocations.set(ic.invocationId, {
      invocationId: ic.invocationId,
      sessionId: ic.session?.id ?? '',
      rootAgent: agent,
      root,
      rootCtx: trace.setSpan(ROOT_CONTEXT, root),
      agents: new Map(),
      models: new Map(),
      tools: new Map(),
      lastContent: undefined,
    })
    return undefined
  }

  async onEventCallback({ invocationContext: ic, event }) {
    const st = this.state(ic.invocationId)
    if (st && !event.partial && event.content) st.lastContent = toJsonSafe(event.content)
    return undefined
  }

  async beforeModelCallback({ callbackContext: cc, llmRequest: req }) {
    const st = this.state(cc.invocationId)
    const agentName = agentNameOf(cc)
    if (!st || agentName === undefined) return undefined
    const parent = trace.setSpan(ROOT_CONTEXT, this.agentSpan(st, agentName))
    const cfg = req.config ?? {}
    const attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider(),
      'gen_ai.conversation.id': st.sessionId,
      'gen_ai.request.model': req.model ?? 'unknown',
      'gen_ai.agent.name': agentName,
      'gen_ai.input.messages': inputMessages(req.contents ?? []),
    }
    if (cfg.temperature !== undefined) attributes['gen_ai.request.temperature'] = cfg.temperature
    if (cfg.maxOutputTokens !== undefined) attributes['gen_ai.request.max_tokens'] = cfg.maxOutputTokens
    if (cfg.systemInstruction !== undefined) attributes['gen_ai.system_instructions'] = JSON.stringify(toJsonSafe(cfg.systemInstruction))
    const decls = (cfg.tools ?? []).flatMap((t) => t.functionDeclarations ?? [])
    if (decls.length) {
      attributes['gen_ai.tool.definitions'] = JSON.stringify(
        toJsonSafe(decls.map((d) => ({ name: d.name, description: d.description, parameters: d.parameters, type: 'function' }))),
      )
    }
    const span = this.tracer.startSpan(`chat ${req.model ?? 'unknown'}`, { attributes }, parent)
    st.models.set(agentName, span)
    return undefined
  }

  async afterModelCallback({ callbackContext: cc, llmResponse: res }) {
    const st = this.state(cc.invocationId)
    const agentName = agentNameOf(cc)
    const span = st?.models.get(agentName)
    if (!span || res.partial) return undefined
    const finish = String(res.finishReason ?? 'stop').toLowerCase()
    span.setAttribute('gen_ai.response.finish_reasons', [finish])
    span.setAttribute('gen_ai.output.messages', outputMessages(res.content, finish))
    span.setAttribute('gen_ai.output.type', 'text')
    const u = res.usageMetadata
    if (u) {
      if (u.promptTokenCount !== undefined) span.setAttribute('gen_ai.usage.input_tokens', u.promptTokenCount)
      if (u.candidatesTokenCount !== undefined) span.setAttribute('gen_ai.usage.output_tokens', u.candidatesTokenCount)
      if (u.totalTokenCount !== undefined) span.setAttribute('gen_ai.usage.total_tokens', u.totalTokenCount)
    }
    if (res.errorCode) {
      span.setAttribute('error.type', String(res.errorCode))
      span.setStatus({ code: SpanStatusCode.ERROR, message: res.errorMessage ?? String(res.errorCode) })
    }
    span.end()
    st.models.delete(agentName)
    return undefined
  }

  async onModelErrorCallback({ callbackContext: cc, error }) {
    const st = this.state(cc.invocationId)
    const agentName = agentNameOf(cc)
    const span = st?.models.get(agentName)
    if (span) {
      span.setAttribute('error.type', error?.name ?? 'Error')
      span.setStatus({ code: SpanStatusCode.ERROR, message: String(error?.message ?? error) })
      span.end()
      st.models.delete(agentName)
    }
    return undefined
  }

  async beforeToolCallback({ tool, toolArgs, toolContext: tc }) {
    const st = this.state(tc.invocationId)
    const agentName = agentNameOf(tc)
    if (!st || agentName === undefined) return undefined
    const parent = trace.setSpan(ROOT_CONTEXT, this.agentSpan(st, agentName))
    const callId = tc.functionCallId
    const span = this.tracer.startSpan(`execute_tool ${tool.name}`, {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.provider.name': provider(),
        'gen_ai.conversation.id': st.sessionId,
        'gen_ai.tool.name': tool.name,
        'gen_ai.agent.name': agentName,
        ...(callId ? { 'gen_ai.tool.call.id': callId } : {}),
        'gen_ai.tool.call.arguments': JSON.stringify(toJsonSafe(toolArgs ?? {})),
      },
    }, parent)
    st.tools.set(callId ?? `${agentName}/${tool.name}`, span)
    return undefined
  }

  async afterToolCallback({ tool, toolContext: tc, result }) {
    const st = this.state(tc.invocationId)
    const key = tc.functionCallId ?? `${agentNameOf(tc)}/${tool.name}`
    const span = st?.tools.get(key)
    if (span) {
      span.setAttribute('gen_ai.tool.call.result', JSON.stringify(toJsonSafe(result ?? {})))
      span.end()
      st.tools.delete(key)
    }
    return undefined
  }

  async onToolErrorCallback({ tool, toolContext: tc, error }) {
    const st = this.state(tc.invocationId)
    const key = tc.functionCallId ?? `${agentNameOf(tc)}/${tool.name}`
    const span = st?.tools.get(key)
    if (span) {
      span.setAttribute('error.type', error?.name ?? 'Error')
      span.setStatus({ code: SpanStatusCode.ERROR, message: String(error?.message ?? error) })
      span.end()
      st.tools.delete(key)
    }
    return undefined
  }

  async afterRunCallback({ invocationContext: ic }) {
    const st = this.state(ic.invocationId)
    if (!st) return undefined
    for (const span of st.models.values()) span.setAttribute('weave.google_adk.interrupted', true).end()
    for (const span of st.tools.values()) span.setAttribute('weave.google_adk.interrupted', true).end()
    for (const span of [...st.agents.values()].reverse()) span.end()
    if (st.lastContent) {
      st.root.setAttribute('gen_ai.output.messages', outputMessages(st.lastContent, 'stop'))
      st.root.setAttribute('gen_ai.output.type', 'text')
    }
    st.root.end()
    this.invocations.delete(ic.invocationId)
    return undefined
  }

  forceFlush() {
    return this.provider.forceFlush()
  }

  shutdown() {
    return this.provider.shutdown()
  }
}
