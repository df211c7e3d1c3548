// Main-thread time per traced model call (beforeModelCallback +
// afterModelCallback, awaited) for a Weave-style JavaScript plugin on the
// OpenTelemetry JS SDK and for our TracingPlugin, side by side in one run.
//
//   node --expose-gc bench/tracing_model_call.bench.mjs     (or: npm run bench -- tracing_model)
//   BENCH_QUICK=1 ...   fewer iterations;   BENCH_GROW_CALLS=n  length of the growing run
//   BENCH_NO_OTLP=1 ... without the exporter:'otlp' variant (receiver in another process)
//
// Fixed-size rows: each call gets a fresh deep copy of the history (made
// untimed), as ADK 2.0.0 does — its content processor cloneDeep()s every
// Content on every model call, so no Content object is ever seen twice.
// Growing rows: one invocation whose history grows by one agent step (model
// function call + tool response) per call; "fresh" clones per call like ADK
// 2.0.0, "same objects" reuses earlier Content objects (an identity cache's
// best case; not what ADK 2.0.0 does).
import { createRequire } from 'node:module';
import { Context, InvocationContext, InMemorySessionService, LlmAgent } from '@google/adk';
import { WeaveStylePlugin } from './baselines/weave_style_plugin.mjs';
import { buildHistory, llmRequest, llmResponse, opening, turn } from './helpers/history.mjs';
import { startReceiverProcess } from './helpers/receiver_client.mjs';

const require = createRequire(import.meta.url);
const { TracingPlugin } = require('../index.js');

const QUICK = !!process.env.BENCH_QUICK;
const SIZES = [
  { label: '10 KB', bytes: 10e3, calls: QUICK ? 60 : 400, reference: 0.55 },
  { label: '100 KB', bytes: 100e3, calls: QUICK ? 30 : 150, reference: 1.8 },
  { label: '1 MB', bytes: 1e6, calls: QUICK ? 8 : 40, reference: 18 },
];
const GROW_CALLS = Number(process.env.BENCH_GROW_CALLS ?? (QUICK ? 60 : 300));
const ROUNDS = 5; // variants alternate in blocks, so machine noise hits all alike

// ---------------------------------------------------------------- variants

function ourPluginAvailable() {
  try {
    const probe = new TracingPlugin({ exporter: 'none' });
    // The placeholder of lib/tracing.js has no native state behind it.
    const ok = typeof probe.getFinishedSpans === 'function';
    probe.shutdown?.();
    return ok;
  } catch (e) {
    console.log(`TracingPlugin could not be constructed: ${e.message}`);
    return false;
  }
}

const OURS = ourPluginAvailable();
// exporter:'otlp' posts to a receiver in another process over loopback, so
// the exporter thread's encoding competes with the main thread as it would
// (a short scheduledDelayMillis so batches go out during the timed calls).
const receiver = OURS && !process.env.BENCH_NO_OTLP ? await startReceiverProcess() : undefined;
const VARIANTS = [
  { key: 'weave', label: 'Weave-style (OTel JS)', make: () => new WeaveStylePlugin({ captureContent: true }) },
  ...(OURS
    ? [
        { key: 'none', label: "ours exporter:'none'", make: () => new TracingPlugin({ exporter: 'none', captureContent: true }) },
        { key: 'memory', label: "ours exporter:'memory'", make: () => new TracingPlugin({ exporter: 'memory', captureContent: true }) },
        ...(receiver
          ? [{ key: 'otlp', label: "ours exporter:'otlp'", make: () => new TracingPlugin({ exporter: 'otlp', endpoint: receiver.endpoint, captureContent: true, batch: { scheduledDelayMillis: 100 } }) }]
          : []),
      ]
    : []),
];

// ------------------------------------------------------------ ADK objects

const sessions = new InMemorySessionService();
const agent = new LlmAgent({ name: 'support_agent', model: 'gemini-2.5-flash', description: 'Answers support questions.', instruction: 'Help.' });
let invocationSeq = 0;

async function newInvocation() {
  const session = await sessions.createSession({ appName: 'bench', userId: 'u' });
  return new InvocationContext({
    invocationId: `e-bench-${++invocationSeq}`,
    agent,
    session,
    userContent: opening(),
    runConfig: {},
    sessionService: sessions,
  });
}

async function startRun(plugin, invocationContext) {
  await plugin.beforeRunCallback({ invocationContext });
}

async function endRun(plugin, invocationContext) {
  await plugin.afterRunCallback({ invocationContext });
}

/** One traced model call; returns its main-thread time in ns. */
async function modelCall(plugin, invocationContext, request, response) {
  const callbackContext = new Context({ invocationContext });
  const t0 = process.hrtime.bigint();
  await plugin.beforeModelCallback({ callbackContext, llmRequest: request });
  await plugin.afterModelCallback({ callbackContext, llmResponse: response });
  return Number(process.hrtime.bigint() - t0);
}

// ----------------------------------------------------------- sanity check

/**
 * Fails the bench if a variant traced nothing: every model call must have
 * produced a chat span whose input messages hold the history.
 */
let checked = 0;
async function checkTraced(v, plugin, calls, minInputChars) {
  await plugin.forceFlush?.();
  checked++;
  let chats;
  let inputChars;
  if (v.key === 'weave') {
    chats = plugin.exporter.exported; // every span, chat ones included
    inputChars = minInputChars; // the comparator's attributes are checked by its own run
  } else if (v.key === 'memory') {
    const spans = plugin.getFinishedSpans().filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    chats = spans.length;
    inputChars = String(spans.at(-1)?.attributes['gen_ai.input.messages'] ?? '').length;
  } else if (v.key === 'otlp') {
    if (plugin.droppedSpanCount !== 0) {
      console.error(`${v.label}: dropped ${plugin.droppedSpanCount} spans`);
      process.exitCode = 1;
    }
    return;
  } else {
    return;
  }
  if (chats < calls || inputChars < minInputChars) {
    console.error(`${v.label}: traced ${chats} of ${calls} calls, last input ${inputChars} chars (< ${minInputChars})`);
    process.exitCode = 1;
  }
}

// ------------------------------------------------------------------ stats

const ms = (ns) => ns / 1e6;
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const fmt = (x) => (x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3)).padStart(7);

function printTable(title, rows) {
  console.log(`\n${title}`);
  const head = ['history'.padEnd(18), ...VARIANTS.map((v) => v.label.padStart(24))];
  if (OURS) head.push(...VARIANTS.slice(1).map((v) => `${v.key}/weave`.padStart(15)));
  const otlpVsMemory = VARIANTS.some((v) => v.key === 'otlp');
  if (otlpVsMemory) head.push('otlp/memory'.padStart(15));
  console.log(head.join(''));
  for (const row of rows) {
    const cells = [row.label.padEnd(18)];
    for (const v of VARIANTS) {
      const r = row.results[v.key];
      cells.push(`${fmt(ms(r.mean))} (med ${fmt(ms(r.median)).trim()})`.padStart(24));
    }
    if (OURS) {
      for (const v of VARIANTS.slice(1)) {
        const r = row.results[v.key];
        const w = row.results.weave;
        cells.push(`${(r.mean / w.mean).toFixed(2)}x (${(r.median / w.median).toFixed(2)}x)`.padStart(15));
      }
    }
    if (otlpVsMemory) {
      const o = row.results.otlp;
      const m = row.results.memory;
      cells.push(`${(o.mean / m.mean).toFixed(2)}x (${(o.median / m.median).toFixed(2)}x)`.padStart(15));
    }
    console.log(cells.join(''));
  }
}

// ------------------------------------------------------------- fixed size

async function fixedSize(size) {
  const history = buildHistory(size.bytes);
  const response = llmResponse(1, { promptTokens: Math.round(size.bytes / 4) });
  const state = [];
  for (const v of VARIANTS) {
    const plugin = v.make();
    const ic = await newInvocation();
    await startRun(plugin, ic);
    state.push({ v, plugin, ic, times: [] });
  }
  const warm = Math.max(3, Math.round(size.calls / 10));
  const perRound = Math.ceil((size.calls + warm) / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate who goes first in each round.
    for (let k = 0; k < state.length; k++) {
      const s = state[(round + k) % state.length];
      for (let i = 0; i < perRound; i++) {
        const request = llmRequest(structuredClone(history));
        s.times.push(await modelCall(s.plugin, s.ic, request, response));
      }
    }
  }
  const results = {};
  for (const s of state) {
    await endRun(s.plugin, s.ic);
    await checkTraced(s.v, s.plugin, s.times.length, size.bytes * 0.8);
    // Drop the warm-up calls of every round's first block.
    const kept = s.times.slice(warm);
    results[s.v.key] = { mean: mean(kept), median: median(kept), n: kept.length };
    await s.plugin.shutdown?.();
  }
  return { label: `${size.label} (ref ${size.reference} ms)`, results };
}

// ---------------------------------------------------------------- growing

async function growing(sameObjects) {
  const steps = [];
  for (let i = 0; i < GROW_CALLS; i++) steps.push(turn(i));
  const state = [];
  for (const v of VARIANTS) {
    const plugin = v.make();
    const ic = await newInvocation();
    await startRun(plugin, ic);
    state.push({ v, plugin, ic, times: [] });
  }
  const base = [opening()];
  let finalBytes = 0;
  for (let i = 0; i < GROW_CALLS; i++) {
    const contents = base.concat(...steps.slice(0, i));
    if (i === GROW_CALLS - 1) finalBytes = JSON.stringify(contents).length;
    const response = llmResponse(i, { toolCall: true, promptTokens: 500 + i * 250 });
    for (let k = 0; k < state.length; k++) {
      const s = state[(i + k) % state.length];
      const request = llmRequest(sameObjects ? contents : structuredClone(contents));
      s.times.push(await modelCall(s.plugin, s.ic, request, response));
    }
  }
  const results = {};
  const tail = {};
  for (const s of state) {
    await endRun(s.plugin, s.ic);
    await checkTraced(s.v, s.plugin, s.times.length, finalBytes * 0.8);
    results[s.v.key] = { mean: mean(s.times), median: median(s.times) };
    const last = s.times.slice(-Math.max(5, Math.round(GROW_CALLS / 10)));
    tail[s.v.key] = { mean: mean(last), median: median(last) };
    await s.plugin.shutdown?.();
  }
  const kb = Math.round(finalBytes / 1024);
  const how = sameObjects ? 'same objects' : 'fresh/call';
  return [
    { label: `grow ${how}: all`, results },
    { label: `  last 10% (~${kb} KB)`, results: tail },
  ];
}

// ------------------------------------------------------------------- main

console.log(`node ${process.version}, ${VARIANTS.length} variants, ${ROUNDS} alternating rounds${QUICK ? ' (BENCH_QUICK)' : ''}`);
if (!OURS) {
  console.log('TracingPlugin is not available yet (lib/tracing.js placeholder: no getFinishedSpans); comparator figures only.');
}
const fixedRows = [];
for (const size of SIZES) fixedRows.push(await fixedSize(size));
printTable('ms per model call (before+after), mean incl. GC (median); ratios of means (of medians); fresh history copy per call:', fixedRows);

const growRows = [...(await growing(false)), ...(await growing(true))];
printTable(`ms per model call, one invocation growing by one step per call, ${GROW_CALLS} calls:`, growRows);
console.log(`\nchecked ${checked} runs: every call made a span${OURS ? ", memory chat spans hold the history" : ''}${process.exitCode ? ' -- FAILED' : ''}`);
if (OURS) console.log('target: ours/weave <= 0.25x at 100 KB and 1 MB' + (receiver ? "; otlp/memory <= 1.05x" : ''));
await receiver?.stop();
