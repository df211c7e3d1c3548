// `npm run bench -- retry`: the awaited cost per call of every callback of
// the native ReflectAndRetryToolPlugin beside (a) a plain JS BasePlugin with
// no-op async callbacks and (b) a plain JS implementation of retry.md, and a
// whole scripted InMemoryRunner run with and without the plugin. All figures
// come from one process, measured in interleaved rounds (the starting variant
// rotates) after a warm-up round; medians are printed.
import { FunctionTool, InMemoryRunner, LlmAgent } from '@google/adk';
import { ReflectAndRetryToolPlugin } from '../index.js';
import { ScriptedLlm, call } from '../__test__/helpers/scripted_llm.mjs';
import { JsReflectAndRetryToolPlugin, NoopPlugin } from './baselines/retry_plugin.mjs';

const CALLBACKS = [
  'onUserMessageCallback', 'beforeRunCallback', 'onEventCallback', 'afterRunCallback', 'beforeAgentCallback',
  'afterAgentCallback', 'beforeNodeCallback', 'afterNodeCallback', 'beforeModelCallback', 'afterModelCallback',
  'onModelErrorCallback', 'beforeToolSelection', 'beforeContextCompaction', 'afterContextCompaction',
  'beforeToolCallback', 'afterToolCallback', 'onToolErrorCallback',
];

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const CALLS = Number(process.env.BENCH_CALLS ?? 20000);
const RUNS = Number(process.env.BENCH_RUNS ?? 1500);
// The failure paths cost ~1 µs a call: shorter, more numerous rounds
// interleave the implementations more finely against the machine's noise.
const FAILURE_ROUNDS = Number(process.env.BENCH_FAILURE_ROUNDS ?? 41);
const FAILURE_CALLS = Number(process.env.BENCH_FAILURE_CALLS ?? 4000);
// BENCH_PARTS=failures (or callbacks, runs; comma-separated) runs only those parts.
const PARTS = (process.env.BENCH_PARTS ?? 'callbacks,failures,runs').split(',');
const compareFailures = (variants) => compare(variants, FAILURE_CALLS, FAILURE_ROUNDS);

// --- real ADK parameters, captured from one run ------------------------------

class Capture extends NoopPlugin {
  constructor() {
    super();
    this.params = {};
  }
}
for (const name of CALLBACKS) {
  Capture.prototype[name] = async function (params) {
    this.params[name] ??= params;
    return undefined;
  };
}

const weather = new FunctionTool({
  name: 'get_weather',
  description: 'weather for a city',
  execute: async ({ city }) => ({ city, temp: 21 }),
});

async function captureParams() {
  const capture = new Capture();
  const llm = new ScriptedLlm([call('get_weather', { city: 'Paris', days: 3 }), 'sunny']);
  const runner = new InMemoryRunner({ agent: new LlmAgent({ name: 'agent', model: llm, tools: [weather] }), plugins: [capture] });
  const session = await runner.sessionService.createSession({ appName: runner.appName, userId: 'u' });
  for await (const _ of runner.runAsync({ userId: 'u', sessionId: session.id, newMessage: { role: 'user', parts: [{ text: 'hi' }] } }));
  const p = capture.params;
  const ctx = p.beforeModelCallback.callbackContext;
  // Callbacks this run did not reach get parameters of their documented shape.
  p.beforeNodeCallback ??= { callbackContext: ctx, node: {} };
  p.afterNodeCallback ??= { callbackContext: ctx, node: {}, output: {} };
  p.onModelErrorCallback ??= { callbackContext: ctx, llmRequest: p.beforeModelCallback.llmRequest, error: new Error('model down') };
  p.beforeToolSelection ??= { callbackContext: ctx, tools: [weather] };
  p.beforeContextCompaction ??= { invocationContext: p.beforeRunCallback.invocationContext };
  p.afterContextCompaction ??= { invocationContext: p.beforeRunCallback.invocationContext };
  const tool = p.afterToolCallback;
  p.onToolErrorCallback = { tool: tool.tool, toolArgs: tool.toolArgs, toolContext: tool.toolContext, error: new Error("Error in tool 'get_weather': city not found") };
  return p;
}

// --- timing -------------------------------------------------------------------

async function timeCalls(fn, calls) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await fn();
  return Number(process.hrtime.bigint() - start) / calls;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/**
 * Interleaved rounds of every variant; returns each variant's median ns per
 * call. A whole untimed round first lets V8 optimise every variant; each
 * round then starts with the next variant, so drift on the shared machine
 * (other processes, CPU frequency) reaches all variants alike.
 */
async function compare(variants, calls = CALLS, rounds = ROUNDS) {
  const samples = variants.map(() => []);
  for (const [, fn] of variants) await timeCalls(fn, Math.max(calls, 20000)); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < variants.length; k++) {
      const v = (r + k) % variants.length;
      // No forced gc() between samples: a full collection every few
      // milliseconds leaves concurrent marking and sweeping running into
      // the next sample on this 2-core machine, charged to whichever variant
      // comes next and growing with what every plugin in the process
      // retains. Each variant's own garbage is collected inside its timing.
      samples[v].push(await timeCalls(variants[v][1], calls));
    }
  }
  return samples.map(median);
}

const fmt = (ns) => (ns >= 10000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`).padStart(9);
const ratio = (a, b) => `${(a / b).toFixed(2)}x`.padStart(7);

// --- the benchmarks -------------------------------------------------------------

const params = await captureParams();
const native = new ReflectAndRetryToolPlugin({ maxRetries: 1e9 });
const noop = new NoopPlugin();
const js = new JsReflectAndRetryToolPlugin({ maxRetries: 1e9 });

// beforeModelCallback wraps the request's toolsDict; give each call a fresh
// request so every call does that work (the same allocation for all three).
const request = params.beforeModelCallback.llmRequest;
const modelParams = () => ({ callbackContext: params.beforeModelCallback.callbackContext, llmRequest: { ...request, toolsDict: { get_weather: weather } } });

console.log(`node ${process.version}, ${ROUNDS} interleaved rounds x ${CALLS} awaited calls, median ns per call`);
console.log('callback (passing path)       native   js no-op  js retry.md  native/no-op  native/js');
const worst = { ratio: 0, name: '' };
for (const name of PARTS.includes('callbacks') ? CALLBACKS : []) {
  if (name === 'onToolErrorCallback') continue; // always answers: measured below
  const p = params[name];
  const make = name === 'beforeModelCallback' ? (plugin) => () => plugin[name](modelParams()) : (plugin) => () => plugin[name](p);
  const [n, o, j] = await compare([['native', make(native)], ['noop', make(noop)], ['js', make(js)]]);
  const used = ['onUserMessageCallback', 'beforeRunCallback', 'afterRunCallback', 'beforeModelCallback', 'afterToolCallback'].includes(name);
  if (!used && n / o > worst.ratio) Object.assign(worst, { ratio: n / o, name });
  console.log(`${(name + (used ? ' *' : '')).padEnd(28)}${fmt(n)}  ${fmt(o)}  ${fmt(j)}     ${ratio(n, o)}    ${ratio(n, j)}`);
}
console.log(`(* = used by the plugin; worst unused callback: ${worst.name} at ${worst.ratio.toFixed(2)}x the no-op)`);

// BENCH_BEFORE=/path/to/another/build/index.js adds that build's plugin as a
// "before" column to the failure paths and whole runs: a change measured
// side by side with what it replaces (copy index.js, binding.js, lib/ and the
// .node file of the old build into one directory).
const Before = process.env.BENCH_BEFORE ? (await import(process.env.BENCH_BEFORE)).ReflectAndRetryToolPlugin : undefined;

if (PARTS.includes('failures')) {
  const impls = [['native', ReflectAndRetryToolPlugin], ...(Before ? [['before', Before]] : []), ['js', JsReflectAndRetryToolPlugin]];
  console.log(`\nfailure paths (fresh plugins each; ${FAILURE_ROUNDS} rounds x ${FAILURE_CALLS} calls)`);
  console.log(`${''.padEnd(35)}${impls.map(([name]) => name.padStart(9)).join('  ')}  ${Before ? 'native/before' : ''}  native/js`);
  // Times `body(plugin)` for a fresh plugin of every implementation, after `setup`.
  const row = async (label, body, setup = async () => {}) => {
    const plugins = impls.map(([, Plugin]) => new Plugin({ maxRetries: 1e9 }));
    for (const plugin of plugins) await setup(plugin);
    const ns = await compareFailures(impls.map(([name], k) => [name, () => body(plugins[k])]));
    const n = ns[0];
    const j = ns[ns.length - 1];
    console.log(`${label.padEnd(35)}${ns.map(fmt).join('  ')}  ${Before ? `     ${ratio(n, ns[1])}` : ''}    ${ratio(n, j)}`);
  };
  const err = params.onToolErrorCallback;
  const ok = params.afterToolCallback;
  await row('onToolErrorCallback (retry)', (p) => p.onToolErrorCallback(err));
  // Each failure from another invocation: no key to reuse (invocation scope).
  const contexts = Array.from({ length: 1024 }, (_, i) => ({ invocationId: `e-${i}-0000-0000-0000-000000000000`, agentName: 'agent' }));
  let i = 0;
  await row('onToolErrorCallback (new id)', (p) => p.onToolErrorCallback({ ...err, toolContext: contexts[i++ & 1023] }));
  await row('failure + success pair', async (p) => {
    await p.onToolErrorCallback(err);
    await p.afterToolCallback(ok);
  });
  await row('afterToolCallback (success)', (p) => p.afterToolCallback(ok));
  // Another tool has a pending failure: no native call.
  const otherTool = { ...err, tool: { name: 'get_time' } };
  await row('  ... another tool failing', (p) => p.afterToolCallback(ok), (p) => p.onToolErrorCallback(otherTool));
  // The same tool failed in another invocation: no native call either.
  const other = { ...err, toolContext: { invocationId: 'e-other' } };
  await row('  ... same tool failing elsewhere', (p) => p.afterToolCallback(ok), (p) => p.onToolErrorCallback(other));
}

// --- whole runs ---------------------------------------------------------------

function makeRunner(plugins) {
  // Each run: the model calls the tool once, then answers.
  let turn = 0;
  const llm = new ScriptedLlm([]);
  llm.script = { get length() { return 1; }, shift: () => (turn++ % 2 === 0 ? call('get_weather', { city: 'Paris' }) : 'sunny') };
  const runner = new InMemoryRunner({ agent: new LlmAgent({ name: 'agent', model: llm, tools: [weather] }), plugins });
  return { llm, runner };
}

async function oneRun({ llm, runner }, sessionId) {
  const start = process.hrtime.bigint();
  for await (const _ of runner.runAsync({ userId: 'u', sessionId, newMessage: { role: 'user', parts: [{ text: 'weather?' }] } }));
  const ns = Number(process.hrtime.bigint() - start);
  llm.requests.length = 0;
  return ns;
}

if (PARTS.includes('runs')) {
  const setups = [
    makeRunner([]),
    makeRunner([new NoopPlugin()]),
    makeRunner([new ReflectAndRetryToolPlugin()]),
    makeRunner([new JsReflectAndRetryToolPlugin()]),
    ...(Before ? [makeRunner([new Before()])] : []),
  ];
  const samples = setups.map(() => []);
  const sessions = [];
  for (let i = 0; i < RUNS + 20; i++) {
    // A fresh session every 10 runs keeps the history (and each request) small.
    if (i % 10 === 0) {
      for (const [v, s] of setups.entries()) {
        sessions[v] = (await s.runner.sessionService.createSession({ appName: s.runner.appName, userId: 'u' })).id;
      }
    }
    // Runs alternate between the setups, starting with a different one each
    // time, so noise and GC timing hit all alike.
    for (let k = 0; k < setups.length; k++) {
      const v = (i + k) % setups.length;
      const ns = await oneRun(setups[v], sessions[v]);
      if (i >= 20) samples[v].push(ns); // the first 20 are warm-up
    }
  }
  const [w, o, n, j, b] = samples.map(median);
  const pct = (x, base) => `${x >= base ? '+' : ''}${((x / base - 1) * 100).toFixed(1)}%`;
  console.log(`\nwhole InMemoryRunner run (model -> tool -> model), median of ${RUNS} alternating runs`);
  console.log(`without plugins     ${fmt(w)}`);
  console.log(`js no-op plugin     ${fmt(o)}  ${pct(o, w)} vs none (ADK's cost of running any plugin)`);
  console.log(`native retry plugin ${fmt(n)}  ${pct(n, w)} vs none, ${pct(n, o)} vs the no-op plugin`);
  console.log(`js retry.md plugin  ${fmt(j)}  ${pct(j, w)} vs none, ${pct(j, o)} vs the no-op plugin`);
  if (Before) console.log(`before (BENCH_BEFORE) ${fmt(b)}  ${pct(b, w)} vs none, ${pct(b, o)} vs the no-op plugin`);
}
