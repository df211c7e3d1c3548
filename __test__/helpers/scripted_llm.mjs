// A BaseLlm that answers from a script instead of the network, and records
// every request it was sent, so tests can assert what the model received.
import { BaseLlm } from '@google/adk';

/** A model turn that calls tools: call('name', {args}) or several at once. */
export function call(name, args = {}, id) {
  return { functionCall: { name, args, ...(id ? { id } : {}) } };
}

/** Builds the LlmResponse for one scripted step. */
function toResponse(step) {
  if (step instanceof Error) throw step;
  if (typeof step === 'string') {
    return { content: { role: 'model', parts: [{ text: step }] }, turnComplete: true };
  }
  if (Array.isArray(step)) {
    return { content: { role: 'model', parts: step }, turnComplete: true };
  }
  if (step && step.functionCall) {
    return { content: { role: 'model', parts: [step] }, turnComplete: true };
  }
  return step; // a full LlmResponse
}

export class ScriptedLlm extends BaseLlm {
  /**
   * @param {Array<string|object|Error|Function>} script one entry per model call:
   *   a string (final text), a functionCall part, an array of parts, a full
   *   LlmResponse, an Error (thrown), or a function (request) => any of those.
   *   Past its end the model answers 'done'.
   */
  constructor(script = [], { model = 'scripted-model', partials = [] } = {}) {
    super({ model });
    this.script = [...script];
    this.partials = partials; // texts streamed as partial responses before each answer
    this.requests = [];
  }

  async *generateContentAsync(llmRequest) {
    // Keep a deep copy: ADK mutates the request object after the call.
    this.requests.push(structuredClone({ contents: llmRequest.contents, config: { ...llmRequest.config, tools: undefined } }));
    let step = this.script.length ? this.script.shift() : 'done';
    if (typeof step === 'function') step = await step(llmRequest);
    for (const text of this.partials) {
      yield { content: { role: 'model', parts: [{ text }] }, partial: true };
    }
    yield toResponse(step);
  }

  async connect() {
    throw new Error('ScriptedLlm does not support live connections');
  }

  /** The function responses the model received in request `i`'s last content. */
  functionResponses(i = this.requests.length - 1) {
    const contents = this.requests[i]?.contents ?? [];
    const out = [];
    for (const c of contents) for (const p of c.parts ?? []) if (p.functionResponse) out.push(p.functionResponse);
    return out;
  }

  /** The function responses that appeared in request i but not in request i-1. */
  newFunctionResponses(i = this.requests.length - 1) {
    const before = i > 0 ? this.functionResponses(i - 1).length : 0;
    return this.functionResponses(i).slice(before);
  }
}

/** Runs one user message through the runner and returns every event. */
export async function runOnce(runner, text = 'hi', { userId = 'u', sessionId, ...rest } = {}) {
  const sid = sessionId ?? (await runner.sessionService.createSession({ appName: runner.appName, userId })).id;
  const events = [];
  for await (const ev of runner.runAsync({
    userId,
    sessionId: sid,
    newMessage: { role: 'user', parts: [{ text }] },
    ...rest,
  })) {
    events.push(ev);
  }
  return { events, sessionId: sid };
}
