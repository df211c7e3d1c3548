// Must compile under `tsc --strict`: both plugins are ADK plugins.
import { AgentTool as AdkAgentTool, BasePlugin, BaseTool, InMemoryRunner, LlmAgent } from '@google/adk'
import {
  GLOBAL_SCOPE_KEY,
  REFLECT_AND_RETRY_RESPONSE_TYPE,
  ReflectAndRetryToolPlugin,
  TracingPlugin,
  TrackingScope,
  AgentTool,
  guardRunner,
  runGuarded,
  type FinishedSpan,
} from 'adk-native-plugins'

const retry = new ReflectAndRetryToolPlugin({ maxRetries: 2, trackingScope: TrackingScope.GLOBAL })
const tracing = new TracingPlugin({ exporter: 'memory', captureContent: false })
const plugins: BasePlugin[] = [new ReflectAndRetryToolPlugin(), new TracingPlugin()]
const both: BasePlugin[] = [retry, tracing]

const scope: 'invocation' | 'global' = retry.trackingScope
const responseType: 'ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN' = REFLECT_AND_RETRY_RESPONSE_TYPE
const key: string = GLOBAL_SCOPE_KEY
const spans: FinishedSpan[] = tracing.getFinishedSpans()
const end: bigint | undefined = spans[0]?.endTimeUnixNano

async function main(): Promise<void> {
  const runner = new InMemoryRunner({ agent: new LlmAgent({ name: 'a', model: 'gemini-2.5-flash' }), plugins })
  for await (const event of runGuarded(runner, {
    userId: 'u',
    sessionId: 's',
    newMessage: { role: 'user', parts: [{ text: 'hi' }] },
  })) {
    void event.invocationId
  }
  let invocationId: string | undefined
  try {
    invocationId = 'x'
  } finally {
    if (invocationId) tracing.finishInterruptedInvocation(invocationId)
  }
  const guarded: InMemoryRunner = guardRunner(runner)
  for await (const event of guarded.runEphemeral({ userId: 'u', newMessage: { role: 'user', parts: [{ text: 'hi' }] } })) {
    void event.author
  }
  const helper = new AgentTool({ agent: new LlmAgent({ name: 'h', model: 'gemini-2.5-flash' }), skipSummarization: true })
  const asAdk: AdkAgentTool = helper
  const tools: BaseTool[] = [helper]
  void new LlmAgent({ name: 'caller', model: 'gemini-2.5-flash', tools: [helper] })
  void [asAdk, tools]
  await tracing.forceFlush()
  await tracing.shutdown()
}
void [both, scope, responseType, key, end, main]
