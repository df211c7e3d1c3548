// A plain JavaScript ReflectAndRetryToolPlugin written straight from
// specs/retry.md, the way adk-js does it: async methods on a BasePlugin
// subclass, counts in nested Maps, guidance in template literals. The
// benchmark's comparator for the native plugin; not shipped.
import { BasePlugin } from '@google/adk';
import { exceededText, retryText } from '../../__test__/helpers/retry_expect.mjs';

const RESPONSE_TYPE = 'ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN';
const GLOBAL_SCOPE_KEY = '__global_reflect_and_retry_scope__';

function renderArgs(toolArgs) {
  try {
    return JSON.stringify(toolArgs ?? {}, null, 2);
  } catch {
    return String(toolArgs);
  }
}

function describe(error, foundInResult) {
  if (error instanceof Error) {
    const type = error.name || 'Error';
    return { type, details: error.message, text: `${type}: ${error.message}` };
  }
  const type = foundInResult ? 'ToolError' : 'Error';
  if (typeof error === 'string') return { type, details: error, text: error };
  if (error !== null && typeof error === 'object') return { type, details: error, text: JSON.stringify(error, null, 2) };
  return { type, details: String(error), text: String(error) };
}

// The spec's texts as the test suites spell them; `.trim()` as adk-js does,
// so the comparator pays the copy every implementation from the spec pays.
function retryGuidance(name, details, args, n, max) {
  return retryText(name, details, args, n, max).trim();
}

function exceededGuidance(name, details, args, max) {
  return exceededText(name, details, args, max).trim();
}

export class JsReflectAndRetryToolPlugin extends BasePlugin {
  constructor({ name = 'js_reflect_retry_tool_plugin', maxRetries = 3, throwExceptionIfRetryExceeded = true, trackingScope = 'invocation', resultErrorExtractor } = {}) {
    super(name);
    this.maxRetries = maxRetries;
    this.throwExceptionIfRetryExceeded = throwExceptionIfRetryExceeded;
    this.trackingScope = trackingScope;
    this.resultErrorExtractor = resultErrorExtractor;
    this.counts = new Map();
  }

  scopeKey(toolContext) {
    if (this.trackingScope === 'global') return GLOBAL_SCOPE_KEY;
    try {
      return toolContext?.invocationId ?? '';
    } catch {
      return '';
    }
  }

  async afterToolCallback({ tool, toolArgs, toolContext, result }) {
    if (result && typeof result === 'object' && result.response_type === RESPONSE_TYPE) return undefined;
    const error = this.resultErrorExtractor ? await this.resultErrorExtractor({ tool, toolArgs, toolContext, result }) : undefined;
    if (error != null) return this.handleFailure(tool, toolArgs, toolContext, error, true);
    const scope = this.counts.get(this.scopeKey(toolContext));
    if (scope) {
      scope.delete(tool.name);
      if (scope.size === 0) this.counts.delete(this.scopeKey(toolContext));
    }
    return undefined;
  }

  async onToolErrorCallback({ tool, toolArgs, toolContext, error }) {
    return this.handleFailure(tool, toolArgs, toolContext, error, false);
  }

  async afterRunCallback({ invocationContext }) {
    if (this.trackingScope === 'invocation') this.counts.delete(invocationContext.invocationId);
  }

  handleFailure(tool, toolArgs, toolContext, error, foundInResult) {
    const key = this.scopeKey(toolContext);
    let scope = this.counts.get(key);
    if (!scope) this.counts.set(key, (scope = new Map()));
    const count = (scope.get(tool.name) ?? 0) + 1;
    scope.set(tool.name, count);
    const failure = describe(error, foundInResult);
    if (count > this.maxRetries) {
      if (this.throwExceptionIfRetryExceeded) {
        throw foundInResult && !(error instanceof Error) ? new Error('A tool result reported an error and the retry limit was exceeded.') : error;
      }
      return this.response(failure, this.maxRetries, exceededGuidance(tool.name, failure.text, renderArgs(toolArgs), this.maxRetries));
    }
    return this.response(failure, count, retryGuidance(tool.name, failure.text, renderArgs(toolArgs), count, this.maxRetries));
  }

  response(failure, retryCount, guidance) {
    return {
      response_type: RESPONSE_TYPE,
      error_type: failure.type,
      error_details: failure.details,
      retry_count: retryCount,
      reflection_guidance: guidance,
    };
  }

  finishInterruptedInvocation(invocationId) {
    this.counts.delete(invocationId);
  }
}

/** A plugin whose 17 callbacks are all no-op async methods (BasePlugin's own). */
export class NoopPlugin extends BasePlugin {
  constructor() {
    super('noop');
  }
}
