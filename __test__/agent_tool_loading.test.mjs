// AgentTool and how @google/adk is loaded: not at all until the first
// AgentTool is constructed; then the build (ESM or CommonJS) the
// application's agents come from, so `instanceof` holds against the
// application's own AgentTool and the sub-agent's run is traced and retried.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import * as esmAdk from '@google/adk'

const require = createRequire(import.meta.url)
const fixture = (name) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

function runFixture(name) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [fixture(name)], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`${name} failed: ${error.message}\n${stderr}`))
      const line = stdout.split('\n').find((l) => l.startsWith('REPORT '))
      if (!line) return reject(new Error(`${name} printed no report:\n${stdout}\n${stderr}`))
      resolve(JSON.parse(line.slice('REPORT '.length)))
    })
  })
}

function assertTracedAndRetried(report) {
  assert.equal(report.instanceOfAdkAgentTool, true)
  assert.equal(report.instanceOfBaseTool, true)
  assert.equal(report.roots, 1)
  assert.equal(report.traces, 1)
  assert.equal(report.innerRootUnderCall, true)
  assert.equal(report.innerRetryCount, 1)
  assert.equal(report.guidanceRetryCount, 1)
  assert.equal(report.open, 0)
}

test('a CommonJS application: require() loads no @google/adk; AgentTool extends the CJS build', async () => {
  const report = await runFixture('agent_tool_cjs_app.cjs')
  assert.deepEqual(report.afterPackage, { requests: 0, builds: [] })
  assert.deepEqual(report.builds, ['cjs'])
  assertTracedAndRetried(report)
})

test('an ES module application: import loads no @google/adk; AgentTool extends the ESM build', async () => {
  const report = await runFixture('agent_tool_esm_app.mjs')
  assert.deepEqual(report.afterPackage, { requests: 0, builds: [] })
  assert.deepEqual(report.builds, ['esm'])
  assertTracedAndRetried(report)
})

test('the CommonJS build through createRequire, with the ESM build loaded too: the agent decides', async () => {
  const cjsAdk = require('@google/adk')
  assert.notEqual(cjsAdk.AgentTool, esmAdk.AgentTool, 'two builds in this process')
  const { runApp } = require('./fixtures/agent_tool_app.cjs')
  const ours = require('../index.js')
  assertTracedAndRetried(await runApp(cjsAdk, ours))
  const tool = new ours.AgentTool({ agent: new cjsAdk.LlmAgent({ name: 'x', model: 'gemini-2.5-flash' }) })
  assert.ok(tool instanceof cjsAdk.AgentTool)
  assert.ok(!(tool instanceof esmAdk.AgentTool))
  assert.ok(esmAdk.isAgentTool(tool), "the ESM build's brand check holds across builds")
})
