// Main-thread time per traced tool call: beforeToolCallback +
// afterToolCallback + onEventCallback of the function response event (the
// common path, where the event reaches the plugin), awaited, with real ADK
// Context objects. The tool result is a fresh object per call, built untimed
// the way tool code builds one (a structuredClone copy would stringify several
// times slower), and, as in ADK, the event's functionResponse.response is that
// same object.
//
//   node --expose-gc bench/tracing_tool_call.bench.mjs     (or: npm run bench -- tracing_tool)
//   BENCH_QUICK=1 ...   fewer calls
//
// Rows: result sizes; columns: exporter:'none' and 'memory', content capture
// on, and exporter:'none' with capture off. Interleaved rounds, medians.
import { createRequire } from 'node:module';
import { Context, InMemorySessionService, InvocationContext, LlmAgent } from '@google/adk';
import { rng } from './helpers/history.mjs';

const require = createRequire(import.meta.url);
const { TracingPlugin } = require('../index.js');

const QUICK = !!process.env.BENCH_QUICK;
const SIZES = [
  { label: '100 B', bytes: 100, calls: QUICK ? 2000 : 20000 },
  { label: '10 KB', bytes: 10e3, calls: QUICK ? 400 : 4000 },
  { label: '100 KB', bytes: 100e3, calls: QUICK ? 60 : 600 },
  { label: '1 MB', bytes: 1e6, calls: QUICK ? 8 : 60 },
];
const ROUNDS = 5;
const VARIANTS = [
  { key: 'none', label: "exporter:'none'", make: () => new TracingPlugin({ exporter: 'none', captureContent: true }) },
  { key: 'memory', label: "exporter:'memory'", make: () => new TracingPlugin({ exporter: 'memory', captureContent: true }) },
  { key: 'nocapture', label: "'none', no capture", make: () => new TracingPlugin({ exporter: 'none', captureContent: false }) },
];

/** A tool result of about `bytes` JSON characters. */
function result(bytes, seed) {
  const rand = rng(seed);
  const rows = [];
  let size = 40;
  while (size < bytes) {
    const row = { id: Math.floor(rand() * 1e6), city: 'Paris', celsius: Math.round(rand() * 300) / 10, note: 'sunny with light wind' };
    rows.push(row);
    size += JSON.stringify(row).length + 1;
  }
  return { status: 'success', rows };
}

const sessions = new InMemorySessionService();
const agent = new LlmAgent({ name: 'weather_agent', model: 'gemini-2.5-flash', description: 'Weather.', instruction: 'Answer.' });
const tool = { name: 'lookup' };
let seq = 0;

async function newInvocation(plugin) {
  const session = await sessions.createSession({ appName: 'bench', userId: 'u' });
  const invocationContext = new InvocationContext({
    invocationId: `e-tool-${++seq}`,
    agent,
    session,
    userContent: { role: 'user', parts: [{ text: 'weather?' }] },
    runConfig: {},
    sessionService: sessions,
  });
  await plugin.beforeRunCallback({ invocationContext });
  return invocationContext;
}

/** One traced tool call; returns its main-thread time in ns. */
async function toolCall(plugin, invocationContext, i, response) {
  const functionCallId = `call-${i}`;
  const toolContext = new Context({ invocationContext, functionCallId });
  const toolArgs = { city: 'Paris' };
  const event = {
    invocationId: invocationContext.invocationId,
    author: 'weather_agent',
    content: { role: 'user', parts: [{ functionResponse: { id: functionCallId, name: tool.name, response } }] },
    actions: {},
  };
  const t0 = process.hrtime.bigint();
  await plugin.beforeToolCallback({ tool, toolArgs, toolContext });
  await plugin.afterToolCallback({ tool, toolArgs, toolContext, result: response });
  await plugin.onEventCallback({ invocationContext, event });
  return Number(process.hrtime.bigint() - t0);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const us = (ns) => (ns / 1e3).toFixed(ns >= 1e5 ? 0 : 2);

console.log(`node ${process.version}, ${ROUNDS} interleaved rounds, median microseconds per tool call`);
console.log(['result'.padEnd(10), ...VARIANTS.map((v) => v.label.padStart(22))].join(''));
for (const size of SIZES) {
  const state = [];
  for (const v of VARIANTS) {
    const plugin = v.make();
    state.push({ v, plugin, ic: await newInvocation(plugin), times: [] });
  }
  const perRound = Math.ceil(size.calls / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < state.length; k++) {
      const s = state[(round + k) % state.length];
      for (let i = 0; i < perRound; i++) {
        const response = result(size.bytes, size.bytes);
        s.times.push(await toolCall(s.plugin, s.ic, round * perRound + i, response));
      }
      globalThis.gc?.();
    }
  }
  const cells = [size.label.padEnd(10)];
  for (const s of state) {
    await s.plugin.afterRunCallback({ invocationContext: s.ic });
    if (s.v.key === 'memory') {
      const tools = s.plugin.getFinishedSpans().filter((sp) => sp.name === 'execute_tool lookup');
      const last = tools.at(-1);
      if (tools.length !== s.times.length || String(last?.attributes['gen_ai.tool.call.result'] ?? '').length < size.bytes * 0.9) {
        console.error(`memory: ${tools.length} of ${s.times.length} tool spans, or the result is missing`);
        process.exitCode = 1;
      }
    }
    // The first round's first calls warm up: keep the rest.
    cells.push(us(median(s.times.slice(Math.ceil(perRound / 10)))).padStart(22));
    await s.plugin.shutdown();
  }
  console.log(cells.join(''));
}
