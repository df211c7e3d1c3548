// The scripted weather agent the export benchmarks trace: one `lookup` tool
// and a ScriptedLlm the benchmark feeds (`llm.script.push(...)`) per run.
import { FunctionTool, InMemoryRunner, LlmAgent } from '@google/adk'
import { ScriptedLlm } from '../../__test__/helpers/scripted_llm.mjs'

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
