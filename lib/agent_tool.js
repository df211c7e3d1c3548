'use strict'
// AgentTool: @google/adk's AgentTool, except that the sub-agent's runner gets
// the plugins of the invocation that called the tool (the Python ADK's
// behaviour; ADK JS 2.0.0 builds it with none, so a sub-agent's model calls
// go untraced and its tool failures unretried).
//
// @google/adk is loaded when the first AgentTool is constructed, not when
// this package is. It ships two builds (ESM and CommonJS) whose classes are
// distinct objects; this class extends the build the application's agent
// comes from, so `instanceof AgentTool` of the application's import holds
// and the inner Runner is of that build too. One build per process: the
// first AgentTool constructed decides.
const path = require('node:path')
const { guarded } = require('./run_guarded.js')
const { linkInnerRun } = require('./agent_tool_link.js')

let adk // { mod, ForwardingArtifactService } of the chosen build

function isInstance(value, Class) {
  try {
    return typeof Class === 'function' && value instanceof Class
  } catch {
    return false
  }
}

/** The build `agent` belongs to: the CommonJS one when it is loaded and the
 * agent is its, else the ESM one (require(esm), Node >= 20.19), else CJS. */
function chooseBuild(agent) {
  let cjsIndex
  try {
    cjsIndex = require.resolve('@google/adk')
  } catch (e) {
    throw new Error(`AgentTool needs its peer dependency @google/adk (>= 2.0.0), which could not be found: ${e.message}`)
  }
  const cjsDir = path.dirname(cjsIndex)
  const esmDir = path.join(cjsDir, '..', 'esm')
  const loadedCjs = require.cache[cjsIndex]?.exports
  if (loadedCjs !== undefined && isInstance(agent, loadedCjs.BaseAgent)) return { dir: cjsDir, mod: loadedCjs }
  let esm
  try {
    esm = require(path.join(esmDir, 'index.js'))
  } catch {
    // No require(esm) on this Node: the CommonJS build it is.
  }
  if (esm !== undefined && (loadedCjs === undefined || isInstance(agent, esm.BaseAgent))) return { dir: esmDir, mod: esm }
  return { dir: cjsDir, mod: loadedCjs ?? require(cjsIndex) }
}

function loadAdk(agent) {
  if (adk !== undefined) return adk
  const { dir, mod } = chooseBuild(agent)
  let Forwarding
  try {
    Forwarding = require(path.join(dir, 'tools', 'forwarding_artifact_service.js')).ForwardingArtifactService
  } catch {
    // Not at that path in this ADK version: ours does the same.
  }
  adk = { mod, ForwardingArtifactService: typeof Forwarding === 'function' ? Forwarding : ForwardingArtifactService }
  // `class AgentTool extends (ADK's AgentTool)`, decided now.
  Object.setPrototypeOf(AgentTool.prototype, mod.AgentTool.prototype)
  Object.setPrototypeOf(AgentTool, mod.AgentTool)
  return adk
}

/** ADK 2.0.0's ForwardingArtifactService: the inner run's artifacts are the caller's. */
class ForwardingArtifactService {
  constructor(toolContext) {
    this.toolContext = toolContext
    this.invocationContext = toolContext.invocationContext
  }
  async saveArtifact(request) {
    return this.toolContext.saveArtifact(request.filename, request.artifact)
  }
  async loadArtifact(request) {
    return this.toolContext.loadArtifact(request.filename, request.version)
  }
  async listArtifactKeys() {
    return this.toolContext.listArtifacts()
  }
  getArtifactService() {
    const service = this.invocationContext.artifactService
    if (!service) throw new Error('Artifact service is not initialized.')
    return service
  }
  async deleteArtifact(request) {
    return this.getArtifactService().deleteArtifact(request.filename)
  }
  async listVersions(request) {
    return this.getArtifactService().listVersions(request.filename)
  }
  async listArtifactVersions(request) {
    return this.getArtifactService().listArtifactVersions(request.filename)
  }
  async getArtifactVersion(request) {
    return this.getArtifactService().getArtifactVersion({ filename: request.filename, version: request.version })
  }
}

function pluginsOf(invocationContext) {
  const plugins = invocationContext?.pluginManager?.plugins
  return plugins ? Array.from(plugins) : []
}

class AgentTool {
  /** Same as ADK's: `new AgentTool({ agent, skipSummarization? })`. */
  constructor(config) {
    const { mod } = loadAdk(config?.agent)
    return Reflect.construct(mod.AgentTool, [config], new.target)
  }

  /** ADK 2.0.0's AgentTool.runAsync, with the caller's plugins on the inner runner. */
  async runAsync({ args, toolContext }) {
    const { mod, ForwardingArtifactService } = adk
    const agent = this.agent
    const hasInputSchema = mod.isLlmAgent(agent) && agent.inputSchema
    const content = {
      role: 'user',
      parts: [{ text: hasInputSchema ? JSON.stringify(args) : args['request'] }],
    }
    const caller = toolContext.invocationContext
    const runner = new mod.Runner({
      appName: agent.name,
      agent,
      artifactService: new ForwardingArtifactService(toolContext),
      sessionService: caller.sessionService ?? new mod.InMemorySessionService(),
      memoryService: caller.memoryService ?? new mod.InMemoryMemoryService(),
      credentialService: caller.credentialService,
      plugins: pluginsOf(caller),
    })
    linkInnerRun(runner.pluginManager, caller.invocationId, toolContext.functionCallId, this.name)
    const session = await runner.sessionService.getOrCreateSession({
      appName: agent.name,
      userId: caller.userId,
      sessionId: caller.session.id,
      state: toolContext.state.toRecord(),
    })
    if (toolContext.abortSignal?.aborted) return ''
    const request = {
      userId: session.userId,
      sessionId: session.id,
      newMessage: content,
      abortSignal: toolContext.abortSignal,
    }
    // Guarded: an inner run that throws or is aborted (no afterRunCallback)
    // is finished on every plugin all the same.
    let lastEvent
    for await (const event of guarded(runner, () => runner.runAsync(request), request.abortSignal)) {
      if (toolContext.abortSignal?.aborted) return undefined
      if (event.actions.stateDelta) {
        const filteredDelta = Object.fromEntries(
          Object.entries(event.actions.stateDelta).filter(([key]) => !key.startsWith(mod.State.TEMP_PREFIX)),
        )
        if (Object.keys(filteredDelta).length > 0) toolContext.state.update(filteredDelta)
      }
      lastEvent = event
    }
    if (!lastEvent?.content?.parts?.length) return ''
    const hasOutputSchema = mod.isLlmAgent(agent) && agent.outputSchema
    const mergedText = lastEvent.content.parts
      .filter((part) => !part.thought)
      .map((part) => part.text)
      .filter((text) => text)
      .join('\n')
    return hasOutputSchema ? JSON.parse(mergedText) : mergedText
  }
}

module.exports = { AgentTool }
