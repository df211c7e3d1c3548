// Comparator for the tracing benchmarks: a plain JavaScript ADK tracing
// plugin on the OpenTelemetry JS SDK that does its work the way W&B Weave's
// ADK plugin does — on the JavaScript thread, per model call: a JSON-safe
// deep copy of every payload (a JSON.stringify walk with a seen-set turning
// BigInt to strings, parsed back), per part and again over the converted
// GenAI messages, then JSON.stringify into span attributes; spans go through
// a BatchSpanProcessor to an exporter.
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
 * JSON-safe deep copy, reference-style: a JSON.stringify walk whose replacer
 * keeps one seen-set for the whole value (so a shared, non-cyclic object also
 * becomes "[Circular]" the second time) and turns BigInt into digits, then
 * JSON.parse back into plain data. Unserialisable input gives null.
 */
export function toJsonSafe(value) {
  if (value == null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return value ?? null;
  }
  const seen = new WeakSet();
  try {
    const text = JSON.stringify(value, (_key, v) => {
      if (typeof v === 'bigint') return v.toString();
      if (v !== null && typeof v === 'object') {
        if (seen.has(v)) return '[Circular]';
        seen.add(v);
      }
      return v;
    });
    return text === undefined ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

/** An attribute value: the JSON of the sanitised value. */
const jsonAttr = (value) => JSON.stringify(toJsonSafe(value));

function convertPart(part) {
  if (!part || typeof part !== 'object') return undefined;
  if (part.inlineData) return { type: 'blob', mime_type: part.inlineData.mimeType ?? '' };
  if (part.functionCall) {
    const fc = part.functionCall;
    return { type: 'tool_call', id: fc.id ?? '', name: fc.name ?? '', arguments: toJsonSafe(fc.args ?? {}) };
  }
  if (part.functionResponse) {
    const fr = part.functionResponse;
    return { type: 'tool_call_response', id: fr.id ?? '', response: toJsonSafe(fr.response ?? {}) };
  }
  if (part.text != null) return { type: 'text', content: String(part.text) };
  return undefined;
}

function convertRole(role, fallback) {
  if (!role) return fallback;
  return role === 'model' ? 'assistant' : role;
}

/** GenAI-convention messages from ADK Contents (payload values sanitised per part). */
export function toInputMessages(contents) {
  return (contents ?? []).map((c) => ({
    role: convertRole(c?.role, ''),
    parts: (c?.parts ?? []).map(convertPart).filter(Boolean),
  }));
}

function toOutputMessages(content, finishReason) {
  return [
    {
      role: convertRole(content.role, 'assistant'),
      parts: (content.parts ?? []).map(convertPart).filter(Boolean),
      finish_reason: finishReason == null ? '' : String(finishReason).toLowerCase(),
    },
  ];
}

function systemInstructionParts(si) {
  if (si == null) return [];
  if (typeof si === 'string') return [{ type: 'text', content: si }];
  if (Array.isArray(si)) return si.flatMap(systemInstructionParts);
  if (Array.isArray(si.parts)) return si.parts.map(convertPart).filter(Boolean);
  const part = convertPart(si);
  return part ? [part] : [];
}

// Read per call, as the reference does (users may flip them at run time).
function captureFromEnv() {
  const v = process.env.ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS || 'true';
  return v === 'true' || v === '1';
}
function providerName() {
  return (process.env.GOOGLE_GENAI_USE_VERTEXAI ?? '').toLowerCase() === 'true' ? 'vertex_ai' : 'gemini';
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
          'gen_ai.provider.name': providerName(),
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
      st.root.setAttribute('gen_ai.input.messages', jsonAttr(toInputMessages([invocationContext.userContent])));
    }
    return undefined;
  }

  async beforeModelCallback({ callbackContext, llmRequest }) {
    const st = this.stateFor(callbackContext);
    const agent = this.agentSpan(st, callbackContext);
    const model = llmRequest?.model ?? 'unknown';
    const span = this.childOf(agent, `chat ${model}`, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': providerName(),
      'gen_ai.request.model': model,
      'gen_ai.agent.name': agentNameOf(callbackContext),
    });
    const config = llmRequest?.config;
    if (config != null) {
      if (config.temperature != null) span.setAttribute('gen_ai.request.temperature', config.temperature);
      if (config.topP != null) span.setAttribute('gen_ai.request.top_p', config.topP);
      if (config.maxOutputTokens != null) span.setAttribute('gen_ai.request.max_tokens', config.maxOutputTokens);
      const definitions = (config.tools ?? []).flatMap((t) =>
        (t?.functionDeclarations ?? []).map((d) => ({
          name: d?.name ?? '',
          description: d?.description ?? '',
          parameters: toJsonSafe(d?.parameters ?? d?.parametersJsonSchema ?? null),
          type: 'function',
        })),
      );
      if (definitions.length) span.setAttribute('gen_ai.tool.definitions', jsonAttr(definitions));
    }
    if (this.captureContent && captureFromEnv()) {
      const instructions = systemInstructionParts(config?.systemInstruction);
      if (instructions.length) span.setAttribute('gen_ai.system_instructions', jsonAttr(instructions));
      const contents = Array.isArray(llmRequest?.contents) ? llmRequest.contents : [];
      if (contents.length) span.setAttribute('gen_ai.input.messages', jsonAttr(toInputMessages(contents)));
    }
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
    if (llmResponse != null) {
      if (llmResponse.finishReason) {
        span.setAttribute('gen_ai.response.finish_reasons', [String(llmResponse.finishReason).toLowerCase()]);
      }
      if (this.captureContent && captureFromEnv() && llmResponse.content != null) {
        span.setAttribute('gen_ai.output.messages', jsonAttr(toOutputMessages(llmResponse.content, llmResponse.finishReason)));
        span.setAttribute('gen_ai.output.type', 'text');
      }
      const u = llmResponse.usageMetadata;
      if (u != null) {
        if (u.promptTokenCount != null) span.setAttribute('gen_ai.usage.input_tokens', u.promptTokenCount);
        if (u.candidatesTokenCount != null) span.setAttribute('gen_ai.usage.output_tokens', u.candidatesTokenCount);
        if (u.totalTokenCount != null) span.setAttribute('gen_ai.usage.total_tokens', u.totalTokenCount);
        if (u.thoughtsTokenCount != null) span.setAttribute('gen_ai.usage.reasoning.output_tokens', u.thoughtsTokenCount);
        if (u.cachedContentTokenCount != null) span.setAttribute('gen_ai.usage.cache_read.input_tokens', u.cachedContentTokenCount);
      }
      if (llmResponse.errorCode) {
        span.setAttribute('error.type', String(llmResponse.errorCode));
        span.setStatus({ code: SpanStatusCode.ERROR, message: llmResponse.errorMessage ?? String(llmResponse.errorCode) });
      }
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
    if (this.captureContent) attributes['gen_ai.tool.call.arguments'] = jsonAttr(toolArgs ?? {});
    st.tools.set(toolContext.functionCallId, this.childOf(agent, `execute_tool ${tool.name}`, attributes));
    return undefined;
  }

  async afterToolCallback({ toolContext, result }) {
    const st = this.invocations.get(toolContext.invocationId);
    const span = st?.tools.get(toolContext.functionCallId);
    if (!span) return undefined;
    st.tools.delete(toolContext.functionCallId);
    if (this.captureContent) span.setAttribute('gen_ai.tool.call.result', jsonAttr(result ?? null));
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
