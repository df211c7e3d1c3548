// `npm run demo`: a scripted agent run (no network, no API key) with both
// plugins. A weather agent hands off to a forecaster sub-agent whose tool fails
// once; ReflectAndRetryToolPlugin answers the model with reflection guidance,
// the model corrects its call, and TracingPlugin prints the run's trace tree.
import { BaseLlm, FunctionTool, InMemoryRunner, LlmAgent, LogLevel, setLogLevel } from '@google/adk'
import { ReflectAndRetryToolPlugin, TracingPlugin, runGuarded } from 'adk-native-plugins'

setLogLevel(LogLevel.ERROR)

/** A model that plays back a fixed script instead of calling an API. */
class ScriptedModel extends BaseLlm {
  constructor(model, turns) {
    super({ model })
    this.turns = turns
  }
  async *generateContentAsync() {
    const parts = this.turns.shift() ?? [{ text: 'Done.' }]
    yield {
      content: { role: 'model', parts },
      usageMetadata: { promptTokenCount: 120 + 40 * this.turns.length, candidatesTokenCount: 18, totalTokenCount: 150 },
      finishReason: 'STOP',
    }
  }
  async connect() {
    throw new Error('no live connections in the demo')
  }
}

const getForecast = new FunctionTool({
  name: 'get_forecast',
  description: 'Forecast for a city; the city must be given as "City, Country".',
  parameters: {
    type: 'OBJECT',
    properties: { city: { type: 'STRING' } },
    required: ['city'],
  },
  execute: ({ city }) => {
    if (!city.includes(',')) throw new Error(`unknown city "${city}": use "City, Country"`)
    return { city, forecast: 'sunny', high_c: 24 }
  },
})

const forecaster = new LlmAgent({
  name: 'forecaster',
  description: 'Answers weather questions with get_forecast.',
  model: new ScriptedModel('scripted-forecaster', [
    [{ functionCall: { name: 'get_forecast', args: { city: 'Paris' } } }],
    [{ functionCall: { name: 'get_forecast', args: { city: 'Paris, France' } } }],
    [{ text: 'Tomorrow in Paris: sunny, up to 24 °C.' }],
  ]),
  tools: [getForecast],
})

const concierge = new LlmAgent({
  name: 'concierge',
  description: 'Greets the user and routes weather questions.',
  model: new ScriptedModel('scripted-concierge', [
    [{ functionCall: { name: 'transfer_to_agent', args: { agentName: 'forecaster' } } }],
  ]),
  subAgents: [forecaster],
})

const retry = new ReflectAndRetryToolPlugin({ maxRetries: 2 })
const tracing = new TracingPlugin({ exporter: 'console', serviceName: 'adk-native-plugins-demo' })
const runner = new InMemoryRunner({ agent: concierge, appName: 'demo', plugins: [retry, tracing] })

const session = await runner.sessionService.createSession({ appName: 'demo', userId: 'demo-user' })
const request = {
  userId: 'demo-user',
  sessionId: session.id,
  newMessage: { role: 'user', parts: [{ text: 'What will the weather be in Paris tomorrow?' }] },
}

console.log('user> What will the weather be in Paris tomorrow?')
for await (const event of runGuarded(runner, request)) {
  for (const part of event.content?.parts ?? []) {
    if (part.text) console.log(`${event.author}> ${part.text}`)
    if (part.functionCall) console.log(`${event.author} calls ${part.functionCall.name}(${JSON.stringify(part.functionCall.args)})`)
    if (part.functionResponse) {
      const r = part.functionResponse.response
      const shown = r?.response_type ? `reflection guidance (retry ${r.retry_count}): ${r.error_details}` : JSON.stringify(r)
      console.log(`  ${part.functionResponse.name} -> ${shown}`)
    }
  }
}
await tracing.shutdown?.()
