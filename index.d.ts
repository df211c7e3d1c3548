// TypeScript reads this file as CommonJS (the package has no "type") and
// @google/adk's declarations as ESM: --module node16, and nodenext before
// TypeScript 5.8, need the import's resolution-mode (TypeScript 5.3 or later).
import type { AgentTool as AdkAgentTool, BasePlugin, BaseTool, Context, Event, Runner } from '@google/adk' with { 'resolution-mode': 'import' }

/** The two tracking scopes of ReflectAndRetryToolPlugin. */
export declare const TrackingScope: {
  readonly INVOCATION: 'invocation'
  readonly GLOBAL: 'global'
}
export type TrackingScope = (typeof TrackingScope)[keyof typeof TrackingScope]

/** `response_type` of every function response the retry plugin writes. */
export declare const REFLECT_AND_RETRY_RESPONSE_TYPE: 'ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN'
/** Scope key under which `'global'` scope keeps its counts. */
export declare const GLOBAL_SCOPE_KEY: '__global_reflect_and_retry_scope__'

/** The function response the model receives for a handled tool failure. */
export interface ToolFailureResponse {
  response_type: typeof REFLECT_AND_RETRY_RESPONSE_TYPE
  error_type: string
  error_details: unknown
  retry_count: number
  reflection_guidance: string
  [key: string]: unknown
}

type Params<K extends keyof BasePlugin> = BasePlugin[K] extends (params: infer P) => unknown ? P : never

/** The 17 callbacks of `@google/adk` 2.0.0's BasePlugin, as both plugins implement them. */
declare abstract class AdkPluginCallbacks {
  readonly name: string
  onUserMessageCallback(params: Params<'onUserMessageCallback'>): ReturnType<BasePlugin['onUserMessageCallback']>
  beforeRunCallback(params: Params<'beforeRunCallback'>): ReturnType<BasePlugin['beforeRunCallback']>
  onEventCallback(params: Params<'onEventCallback'>): ReturnType<BasePlugin['onEventCallback']>
  afterRunCallback(params: Params<'afterRunCallback'>): ReturnType<BasePlugin['afterRunCallback']>
  beforeAgentCallback(params: Params<'beforeAgentCallback'>): ReturnType<BasePlugin['beforeAgentCallback']>
  afterAgentCallback(params: Params<'afterAgentCallback'>): ReturnType<BasePlugin['afterAgentCallback']>
  beforeNodeCallback(params: Params<'beforeNodeCallback'>): ReturnType<BasePlugin['beforeNodeCallback']>
  afterNodeCallback(params: Params<'afterNodeCallback'>): ReturnType<BasePlugin['afterNodeCallback']>
  beforeModelCallback(params: Params<'beforeModelCallback'>): ReturnType<BasePlugin['beforeModelCallback']>
  afterModelCallback(params: Params<'afterModelCallback'>): ReturnType<BasePlugin['afterModelCallback']>
  onModelErrorCallback(params: Params<'onModelErrorCallback'>): ReturnType<BasePlugin['onModelErrorCallback']>
  beforeToolSelection(params: Params<'beforeToolSelection'>): ReturnType<BasePlugin['beforeToolSelection']>
  beforeContextCompaction(params: Params<'beforeContextCompaction'>): ReturnType<BasePlugin['beforeContextCompaction']>
  afterContextCompaction(params: Params<'afterContextCompaction'>): ReturnType<BasePlugin['afterContextCompaction']>
  beforeToolCallback(params: Params<'beforeToolCallback'>): ReturnType<BasePlugin['beforeToolCallback']>
  afterToolCallback(params: Params<'afterToolCallback'>): ReturnType<BasePlugin['afterToolCallback']>
  onToolErrorCallback(params: Params<'onToolErrorCallback'>): ReturnType<BasePlugin['onToolErrorCallback']>
  /**
   * Closes what an invocation left open when its run never reached
   * `afterRunCallback` (a consumer `break`, an abort, a throw). Synchronous,
   * idempotent, never throws; unknown ids are ignored.
   */
  finishInterruptedInvocation(invocationId: string): void
}

export interface ReflectAndRetryToolPluginOptions {
  /** Plugin name. Default `'reflect_retry_tool_plugin'`. */
  name?: string
  /** Consecutive failures per tool answered with retry guidance. Default 3. */
  maxRetries?: number
  /** Reject the callback once the limit is exceeded. Default `true`. */
  throwExceptionIfRetryExceeded?: boolean
  /** Where counts live. Default `'invocation'`. */
  trackingScope?: TrackingScope
  /** A return other than `null`/`undefined` means the result reports that error. */
  resultErrorExtractor?: (params: {
    tool: BaseTool
    toolArgs: Record<string, unknown>
    toolContext: Context
    result: Record<string, unknown>
  }) => unknown | Promise<unknown>
  /** Returning `false` marks a failure as not retryable. */
  retryPredicate?: (params: {
    tool: BaseTool
    toolArgs: Record<string, unknown>
    toolContext: Context
    error: unknown
  }) => boolean | Promise<boolean>
}

/** Answers failed tool calls with reflection guidance so the model corrects itself. */
export declare class ReflectAndRetryToolPlugin extends AdkPluginCallbacks {
  constructor(options?: ReflectAndRetryToolPluginOptions)
  readonly name: string
  readonly maxRetries: number
  readonly throwExceptionIfRetryExceeded: boolean
  readonly trackingScope: TrackingScope
  /** Alias of `trackingScope`, as in adk-js. */
  readonly scope: TrackingScope
}

export interface TracingBatchOptions {
  maxQueueSize?: number
  maxExportBatchSize?: number
  scheduledDelayMillis?: number
  exportTimeoutMillis?: number
}

export interface TracingPluginOptions {
  /** Plugin name. Default `'tracing_plugin'`. */
  name?: string
  exporter?: 'otlp' | 'console' | 'memory' | 'none'
  /** Full OTLP/HTTP traces URL, used verbatim. */
  endpoint?: string
  headers?: Record<string, string>
  /** Export to W&B Weave: `project` is `'entity/project'`. */
  weave?: { project: string; apiKey?: string; baseUrl?: string }
  serviceName?: string
  resourceAttributes?: Record<string, string>
  /** Default: `ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS` (unset or empty: on). */
  captureContent?: boolean
  batch?: TracingBatchOptions
  /** Open invocations kept before the oldest is finished as interrupted. Default 10000. */
  maxOpenInvocations?: number
  /** How long process exit waits for queued spans to be delivered, in ms. Default 2000. */
  exitFlushTimeoutMillis?: number
  /**
   * Default `true`: a run started inside an active OpenTelemetry span (read
   * through `@opentelemetry/api` when it can be loaded) is a child of that span,
   * in its trace; an unsampled parent means the run's spans are not exported.
   */
  joinActiveTrace?: boolean
}

export interface FinishedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  startTimeUnixNano: bigint
  endTimeUnixNano: bigint
  attributes: Record<string, string | number | boolean | string[]>
  status: { code: 0 | 1 | 2; message?: string }
}

/** Mirrors every ADK run into OpenTelemetry GenAI spans. */
export declare class TracingPlugin extends AdkPluginCallbacks {
  constructor(options?: TracingPluginOptions)
  readonly name: string
  /** Invocations started and not yet finished. */
  readonly openInvocationCount: number
  /** Spans dropped by a full queue or an export that gave up. */
  readonly droppedSpanCount: number
  /** Resolves when every span ended so far was handed to the exporter and answered, or given up on
   * (each batch after `batch.exportTimeoutMillis`). */
  forceFlush(): Promise<void>
  /** Finishes open invocations as interrupted, flushes and stops the exporter. Idempotent. */
  shutdown(): Promise<void>
  /** With `exporter: 'memory'`, every span ended so far, in end order; `[]` otherwise. */
  getFinishedSpans(): FinishedSpan[]
  /**
   * The trace id (32 lowercase hex) of an open invocation or one of the last
   * 10,000 finished, whether or not its spans are exported; `undefined`
   * otherwise (and for a non-string id). Never throws.
   */
  traceIdOf(invocationId: string): string | undefined
}

/**
 * Yields exactly what `runner.runAsync(request)` yields and, however the
 * iteration ends, finishes every invocation it started on every plugin of the
 * runner that has `finishInterruptedInvocation`.
 */
export declare function runGuarded(
  runner: Runner,
  request: Parameters<Runner['runAsync']>[0],
): AsyncGenerator<Event, void, undefined>

/**
 * From now on `runner.runAsync(...)` and `runner.runEphemeral(...)` of this
 * instance behave as `runGuarded` does: the same events, and every invocation
 * they started (AgentTool runs included) finished on every plugin however the
 * iteration ends. Idempotent; returns the same runner.
 */
export declare function guardRunner<R extends Runner>(runner: R): R

/**
 * `@google/adk`'s `AgentTool` (same constructor and declaration) whose inner
 * runner gets the plugins of the invocation that called it, as in the Python
 * ADK: `TracingPlugin` puts the sub-agent's spans under the call's
 * `execute_tool` span, `ReflectAndRetryToolPlugin` retries its tool failures.
 * `@google/adk` is loaded when the first one is constructed.
 */
export declare class AgentTool extends AdkAgentTool {}
