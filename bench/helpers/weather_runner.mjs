// The scripted weather agent the export benchmarks trace: one `lookup` tool
// and a ScriptedLlm fed per run (`weatherRun`).
import { FunctionTool, InMemoryRunner, LlmAgent } from '@google/adk'
import { ScriptedLlm, call } from '../../__test__/helpers/scripted_llm.mjs'

export function weatherRunner(appName, plugin) {
  const llm = new ScriptedLlm([])
  const lookup = new FunctionTool({
    name: 'lookup',
    description: 'Looks up the weather for a city.',
    parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
    execute: async ({ city }) => ({ city, weather: 'sunny', celsius: 21 }),
  })
  const agent = new LlmAgent({
    name: 'weather_agent',
    description: 'Answers weather questions.',
    model: llm,
    instruction: 'Answer briefly.',
    tools: [lookup],
  })
  return { llm, runner: new InMemoryRunner({ agent, appName, plugins: plugin ? [plugin] : [] }) }
}

/** One run of a weatherRunner (a `lookup` call, then the answer) on a fresh
 * session, deleted afterwards; the requests the LLM recorded are let go, so
 * memory stays flat over thousands of runs. */
export async function weatherRun({ llm, runner }, appName, i) {
  llm.script.push(call('lookup', { city: 'Paris' }), `Sunny in Paris (${i}).`)
  const session = await runner.sessionService.createSession({ appName, userId: 'u' })
  for await (const _ of runner.runAsync({ userId: 'u', sessionId: session.id, newMessage: { role: 'user', parts: [{ text: 'Weather in Paris?' }] } })) {
    // drain
  }
  await runner.sessionService.deleteSession({ appName, userId: 'u', sessionId: session.id })
  llm.requests.length = 0
}
