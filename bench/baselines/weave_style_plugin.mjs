// Comparator for the tracing benchmarks: a plain JavaScript ADK tracing
// plugin on the OpenTelemetry JS SDK that does its work the way W&B Weave's
// ADK plugin does — on the JavaScript thread, per model call: a JSON-safe
// deep copy of the request (a sanitiser walking every object with a seen-set,
// BigInt to string), conversion to GenAI message parts, JSON.stringify into
// span attributes; spans go through a BatchSpanProcessor to an exporter.
//
// The exporter discards (the benchmark measures the callback path, not the
// network), unless one is passed in. Written for this benchmark; not Weave's code.
import { BasePlugin } from '@google/adk';
import { context as otelContext, trace, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** An exporter that accepts every batch and keeps nothing. */
export class DiscardingExporter {
  constructor() {
    this.exported = 0;
  }
  export(spans, resultCallback) {
    this.exported += spans.length;
    resultCallback({ code: 0 });
  }
  shutdown() {
    return Promise.resolve();
  }
  forceFlush() {
    return Promise.resolve();
  }
}

/**
 * JSON-safe deep copy, reference-style: one seen-set for the whole walk, so a
 * shared (non-cyclic) object also becomes "[Circular]" the second time.
 */
export function toJsonSafe(value, seen = new WeakSet()) {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'function':
    case 'symbol':
    case 'undefined':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'object':
      break;
    default:
      return value;
  }
  if (value === null) return null;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => toJsonSafe(v, seen) ?? null);
  if (value instanceof Date) return value.toISOString();
  if (ArrayBuffer.isView(value)) return `[${value.constructor.name} ${value.byteLength} bytes]`;
  const out = {};
  for (const key of Object.keys(value)) {
    const v = toJsonSafe(value[key], seen);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

function convertPart(part) {
  if (!part || typeof part !== 'object') return undefined;
  if (part.inlineData) return { type: 'blob', mime_type: part.inlineData.mimeType ?? '' };
  if (part.functionCall) {
    const fc = part.functionCall;
    return { type: 'tool_call', id: fc.id ?? '', name: fc.name ?? '', arguments: fc.args ?? {} };
  }
  if (part.functionResponse) {
    const fr = part.functionResponse;
    return { type: 'tool_call_response', id: fr.id ?? '', response: fr.response ?? {} };
  }
  if (typeof part.text === 'string') return { type: 'text', content: part.text };
  return undefined;
}

function convertRole(role, fallback) {
  if (role === 'model') return 'assistant';
  return role ?? fallback;
}

/** GenAI-convention messages from (already JSON-safe) Contents. */
export function toInputMessages(contents) {
  return (contents ?? []).map((c) => ({
    role: convertRole(c?.role, ''),
    parts: (c?.parts ?? []).map(convertPart).filter(Boolean),
  }));
}

function toOutputMessages(content, finishReason) {
  if (!content) return [];
  return [
    {
      role: convertRole(content.role, 'assistant'),
      parts: (content.parts ?? []).map(convertPart).filter(Boolean),
      finish_reason: (finishReason ?? 'stop').toLowerCase(),
    },
  ];
}

function agentNameOf(ctx) {
  try {
    return ctx.agentName;
  } catch {
    return '';
  }
}

export class WeaveStylePlugin extends BasePlugin {
  constructor({ name = 'weave_style_plugin', exporter = new DiscardingExporter(), captureContent = true } = {}) {
    super(name);
    this.exporter = exporter;
    this.provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
    this.tracer = this.provider.getTracer('weave-style-adk');
    this.captureContent = captureContent;
    this.provider_name = process.env.GOOGLE_GENAI_USE_VERTEXAI?.toLowerCase() === 'true' ? 'vertex_ai' : 'gemini';
    /** invocationId -> { root, agents: Map<name, span>, models: Map<name, span>, tools: Map<id, span> } */
    this.invocations = new Map();
  }

  childOf(parent, name, attributes) {
    return this.tracer.startSpan(name, { attributes }, trace.setSpan(otelContext.active(), parent));
  }

  stateFor(ctx) {
    const id = ctx.invocationId;
    let st = this.invocations.get(id);
    if (!st) {
      const agent = ctx.invocationContext?.agent;
      const root = this.tracer.startSpan(agent?.name ? `invoke_agent ${agent.name}` : 'invoke_agent', {
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.provider.name': this.provider_name,
          'gen_ai.agent.id': id,
          'gen_ai.agent.name': agent?.name ?? '',
          'gen_ai.agent.description': agent?.description ?? '',
          'gen_ai.conversation.id': ctx.invocationContext?.session?.id ?? '',
          'weave.google_adk.invocation_id': id,
        },
      });
      st = { root, agents: new Map(), models: new Map(), tools: new Map() };
      this.invocations.set(id, st);
    }
    return st;
  }

  agentSpan(st, ctx) {
    const name = agentNameOf(ctx);
    let span = st.agents.get(name);
    if (!span) {
      span = this.childOf(st.root, `invoke_agent ${name}`, {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': name,
        'gen_ai.agent.id': ctx.invocationId,
      });
      st.agents.set(name, span);
    }
    return span;
  }

  async beforeRunCallback({ invocationContext }) {
    const st = this.stateFor({ invocationId: invocationContext.invocationId, invocationContext });
    if (this.captureContent && invocationContext.userContent) {
      const safe = toJsonSafe(invocationContext.userContent);
      st.root.setAttribute('gen_ai.input.messages', JSON.stringify(toInputMessages([safe])));
    }
    return undefined;
  }

  async beforeModelCallback({ callbackContext, llmRequest }) {
    const st = this.stateFor(callbackContext);
    const agent = this.agentSpan(st, callbackContext);
    // The reference copies the whole request payload into a JSON-safe value
    // first, then derives every attribute from the copy.
    const payload = toJsonSafe({ model: llmRequest.model, contents: llmRequest.contents, config: llmRequest.config });
    const config = payload.config ?? {};
    const attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': this.provider_name,
      'gen_ai.request.model': payload.model ?? 'unknown',
      'gen_ai.agent.name': agentNameOf(callbackContext),
    };
    if (config.temperature !== undefined) attributes['gen_ai.request.temperature'] = config.temperature;
    if (config.topP !== undefined) attributes['gen_ai.request.top_p'] = config.topP;
    if (config.maxOutputTokens !== undefined) attributes['gen_ai.request.max_tokens'] = config.maxOutputTokens;
    const declarations = (config.tools ?? []).flatMap((t) => t.functionDeclarations ?? []);
    if (declarations.length) {
      attributes['gen_ai.tool.definitions'] = JSON.stringify(
        declarations.map((d) => ({ name: d.name, description: d.description, parameters: d.parameters, type: 'function' })),
      );
    }
    if (this.captureContent) {
      const si = config.systemInstruction;
      if (si) {
        const parts = typeof si === 'string' ? [{ type: 'text', content: si }] : (si.parts ?? []).map(convertPart).filter(Boolean);
        attributes['gen_ai.system_instructions'] = JSON.stringify(parts);
      }
      attributes['gen_ai.input.messages'] = JSON.stringify(toInputMessages(payload.contents));
    }
    const span = this.childOf(agent, `chat ${payload.model ?? 'unknown'}`, attributes);
    st.models.set(agentNameOf(callbackContext), span);
    return undefined;
  }

  async afterModelCallback({ callbackContext, llmResponse }) {
    if (llmResponse?.partial) return undefined;
    const st = this.invocations.get(callbackContext.invocationId);
    const name = agentNameOf(callbackContext);
    const span = st?.models.get(name);
    if (!span) return undefined;
    st.models.delete(name);
    const safe = toJsonSafe(llmResponse);
    if (safe.finishReason) span.setAttribute('gen_ai.response.finish_reasons', [safe.finishReason.toLowerCase()]);
    if (this.captureContent && safe.content) {
      span.setAttribute('gen_ai.output.messages', JSON.stringify(toOutputMessages(safe.content, safe.finishReason)));
      span.setAttribute('gen_ai.output.type', 'text');
    }
    const u = safe.usageMetadata;
    if (u) {
      if (u.promptTokenCount !== undefined) span.setAttribute('gen_ai.usage.input_tokens', u.promptTokenCount);
      if (u.candidatesTokenCount !== undefined) span.setAttribute('gen_ai.usage.output_tokens', u.candidatesTokenCount);
      if (u.totalTokenCount !== undefined) span.setAttribute('gen_ai.usage.total_tokens', u.totalTokenCount);
      if (u.thoughtsTokenCount !== undefined) span.setAttribute('gen_ai.usage.reasoning.output_tokens', u.thoughtsTokenCount);
    }
    if (safe.errorCode) {
      span.setAttribute('error.type', String(safe.errorCode));
      span.setStatus({ code: SpanStatusCode.ERROR, message: safe.errorMessage ?? String(safe.errorCode) });
    }
    span.end();
    return undefined;
  }

  async beforeToolCallback({ tool, toolArgs, toolContext }) {
    const st = this.stateFor(toolContext);
    const agent = this.agentSpan(st, toolContext);
    const attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool.name,
      'gen_ai.agent.name': agentNameOf(toolContext),
    };
    if (toolContext.functionCallId) attributes['gen_ai.tool.call.id'] = toolContext.functionCallId;
    if (this.captureContent) attributes['gen_ai.tool.call.arguments'] = JSON.stringify(toJsonSafe(toolArgs));
    st.tools.set(toolContext.functionCallId, this.childOf(agent, `execute_tool ${tool.name}`, attributes));
    return undefined;
  }

  async afterToolCallback({ toolContext, result }) {
    const st = this.invocations.get(toolContext.invocationId);
    const span = st?.tools.get(toolContext.functionCallId);
    if (!span) return undefined;
    st.tools.delete(toolContext.functionCallId);
    if (this.captureContent) span.setAttribute('gen_ai.tool.call.result', JSON.stringify(toJsonSafe(result)));
    span.end();
    return undefined;
  }

  async onToolErrorCallback({ toolContext, error }) {
    const st = this.invocations.get(toolContext.invocationId);
    const span = st?.tools.get(toolContext.functionCallId);
    if (!span) return undefined;
    st.tools.delete(toolContext.functionCallId);
    span.setAttribute('error.type', error?.name ?? 'Error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: String(error?.message ?? error) });
    span.end();
    return undefined;
  }

  async afterRunCallback({ invocationContext }) {
    const st = this.invocations.get(invocationContext.invocationId);
    if (!st) return undefined;
    this.invocations.delete(invocationContext.invocationId);
    for (const span of [...st.models.values(), ...st.tools.values()]) {
      span.setAttribute('weave.google_adk.interrupted', true);
      span.end();
    }
    for (const span of st.agents.values()) span.end();
    st.root.end();
    return undefined;
  }

  forceFlush() {
    return this.provider.forceFlush();
  }

  shutdown() {
    return this.provider.shutdown();
  }
}
