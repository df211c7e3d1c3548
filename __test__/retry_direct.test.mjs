// ReflectAndRetryToolPlugin callbacks called directly: rejection identity,
// hostile inputs, rendering details, concurrency and invocation cleanup.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReflectAndRetryToolPlugin, GLOBAL_SCOPE_KEY } from '../index.js';
import { args, exceededText, handled, notRetryableText, retryText } from './helpers/retry_expect.mjs';

const tool = (name = 't') => ({ name });
const ctx = (invocationId = 'inv') => ({ invocationId });
const fail = (plugin, { name = 't', toolArgs = {}, error = new Error('boom'), ...rest } = {}) =>
  plugin.onToolErrorCallback({ tool: tool(name), toolArgs, toolContext: 'context' in rest ? rest.context : ctx(), error });

test('past the limit onToolErrorCallback rejects with the very Error it was given', async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 1 });
  await fail(plugin);
  const error = new Error('second');
  const out = fail(plugin, { error });
  assert.ok(out instanceof Promise);
  await assert.rejects(out, (e) => e === error);
  // Counting goes on past the limit.
  const third = new Error('third');
  await assert.rejects(fail(plugin, { error: third }), (e) => e === third);
});

test('afterToolCallback past the limit rejects with the extracted Error, else the generic Error', async () => {
  const found = new SyntaxError('bad');
  const p1 = new ReflectAndRetryToolPlugin({ maxRetries: 0, resultErrorExtractor: ({ result }) => result.err });
  await assert.rejects(p1.afterToolCallback({ tool: tool(), toolArgs: {}, toolContext: ctx(), result: { err: found } }), (e) => e === found);
  await assert.rejects(
    p1.afterToolCallback({ tool: tool(), toolArgs: {}, toolContext: ctx(), result: { err: { code: 1 } } }),
    (e) => e instanceof Error && e.message === 'A tool result reported an error and the retry limit was exceeded.',
  );
});

test('every passing path resolves to undefined, never null, in a real Promise', async () => {
  const plugin = new ReflectAndRetryToolPlugin({ resultErrorExtractor: () => null });
  const results = [
    plugin.afterToolCallback({ tool: tool(), toolArgs: {}, toolContext: ctx(), result: { ok: 1 } }),
    plugin.afterRunCallback({ invocationContext: { invocationId: 'inv' } }),
    plugin.beforeModelCallback({ callbackContext: {}, llmRequest: { contents: [], toolsDict: {} } }),
    plugin.beforeToolSelection({}),
    plugin.onModelErrorCallback({}),
  ];
  for (const r of results) {
    assert.ok(r instanceof Promise);
    assert.equal(await r, undefined);
  }
  const asyncNull = new ReflectAndRetryToolPlugin({ resultErrorExtractor: async () => null });
  const r = asyncNull.afterToolCallback({ tool: tool(), toolArgs: {}, toolContext: ctx(), result: {} });
  assert.ok(r instanceof Promise);
  assert.equal(await r, undefined);
});

test('error_type and details: Error subclasses, empty names, message-less Errors, non-Errors', async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 100, trackingScope: 'global' });
  class QuotaError extends Error {
    name = 'QuotaError';
  }
  const nameless = new Error('no name');
  nameless.name = '';
  const cases = [
    [new TypeError('typed'), 'TypeError', 'typed', 'TypeError: typed'],
    [new QuotaError('over'), 'QuotaError', 'over', 'QuotaError: over'],
    [nameless, 'Error', 'no name', 'Error: no name'],
    [new Error(), 'Error', '', 'Error: '],
  ];
  let n = 0;
  for (const [error, type, details, text] of cases) {
    const r = await fail(plugin, { error, name: `tool${n}` });
    assert.deepEqual(r, handled(type, details, 1, retryText(`tool${n}`, text, '{}', 1, 100)));
    n++;
  }
});

test('<args> is exactly JSON.stringify(toolArgs ?? {}, null, 2)', async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 100 });
  const tricky = {
    when: new Date(0),
    custom: { toJSON: () => 'custom!' },
    nan: NaN,
    big: 1e21,
    neg: -0,
    nested: [1, undefined, () => 1, 'x'],
    skipped: undefined,
    unicode: 'é ✓ \u2028',
  };
  for (const value of [tricky, undefined, null, {}, [1, 2]]) {
    const r = await fail(plugin, { toolArgs: value, name: 'args' });
    assert.ok(r.reflection_guidance.includes('```json\n' + args(value) + '\n```'), JSON.stringify(value));
  }
});

test('hostile args (cycle, BigInt, throwing getter and toJSON) still render guidance', async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 100 });
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const throwing = {
    ok: 'yes',
    get boom() {
      throw new Error('getter');
    },
  };
  const badToJSON = { toJSON() {
    throw new Error('toJSON');
  } };
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  for (const [label, value, mustContain] of [
    ['cycle', cyclic, '"a": 1'],
    ['bigint', { n: 12345678901234567890n }, '12345678901234567890'],
    ['getter', throwing, '"ok": "yes"'],
    ['toJSON', badToJSON, '```json\n'],
    ['revoked proxy', revoked.proxy, '```json\n'],
    ['function', () => 1, '```json\n'],
  ]) {
    const r = await fail(plugin, { toolArgs: value, name: label });
    assert.equal(r.retry_count, 1, label);
    assert.ok(r.reflection_guidance.startsWith(`The call to tool \`${label}\` failed.`), label);
    assert.ok(r.reflection_guidance.includes(mustContain), `${label}: ${r.reflection_guidance.slice(0, 300)}`);
  }
});

test('a missing or hostile toolContext never crashes; it counts under the empty key', async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 100 });
  const hostile = {
    get invocationId() {
      throw new Error('no invocation');
    },
  };
  const noAgent = {
    invocationId: 'wf',
    get agentName() {
      throw new Error('Workflow root has no agent');
    },
  };
  assert.equal((await fail(plugin, { context: undefined })).retry_count, 1);
  assert.equal((await fail(plugin, { context: null })).retry_count, 2);
  assert.equal((await fail(plugin, { context: hostile })).retry_count, 3);
  assert.equal((await fail(plugin, { context: { invocationId: 42 } })).retry_count, 4);
  assert.equal((await fail(plugin, { context: noAgent })).retry_count, 1);
  // The empty key is an invocation like any other: finishing it drops those counts.
  plugin.finishInterruptedInvocation('');
  assert.equal((await fail(plugin, { context: undefined })).retry_count, 1);
  // No params at all.
  assert.ok((await plugin.onToolErrorCallback(undefined)).reflection_guidance.startsWith('The call to tool ``'));
  assert.equal(await plugin.afterToolCallback(undefined), undefined);
  assert.equal(await plugin.afterRunCallback(undefined), undefined);
  assert.equal(await plugin.beforeModelCallback(undefined), undefined);
  assert.equal(await plugin.beforeModelCallback({ llmRequest: Object.freeze({ toolsDict: {} }) }), undefined);
});

test('afterToolCallback handles string, number, array, null and undefined results', async () => {
  const seen = [];
  const plugin = new ReflectAndRetryToolPlugin({
    maxRetries: 100,
    resultErrorExtractor: ({ result }) => {
      seen.push(result);
      return typeof result === 'string' && result.startsWith('ERR') ? result : undefined;
    },
  });
  for (const result of ['fine', 7, [1, 2], null, undefined, true]) {
    assert.equal(await plugin.afterToolCallback({ tool: tool(), toolArgs: {}, toolContext: ctx(), result }), undefined);
  }
  assert.deepEqual(seen, ['fine', 7, [1, 2], null, undefined, true]);
  const r = await plugin.afterToolCallback({ tool: tool(), toolArgs: {}, toolContext: ctx(), result: 'ERR: down' });
  assert.deepEqual(r, handled('ToolError', 'ERR: down', 1, retryText('t', 'ERR: down', '{}', 1, 100)));
  // Without an extractor every non-own result is a success that resets the count.
  const plain = new ReflectAndRetryToolPlugin();
  await fail(plain);
  for (const result of ['s', 1, [], undefined]) {
    assert.equal(await plain.afterToolCallback({ tool: tool(), toolArgs: {}, toolContext: ctx(), result }), undefined);
  }
  assert.equal((await fail(plain)).retry_count, 1);
});

test('a void tool (undefined result) is a success', async () => {
  const plugin = new ReflectAndRetryToolPlugin();
  await fail(plugin);
  await fail(plugin);
  assert.equal(await plugin.afterToolCallback({ tool: tool(), toolArgs: {}, toolContext: ctx(), result: undefined }), undefined);
  assert.equal((await fail(plugin)).retry_count, 1);
});

test("the plugin's own answers coming back through afterToolCallback are not successes", async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 5 });
  const own = await fail(plugin);
  assert.equal(await plugin.afterToolCallback({ tool: tool(), toolArgs: {}, toolContext: ctx(), result: own }), undefined);
  const notFound = { error: 'Invoking `t()` failed as no tool with that name is available. The tools you can call are: none. You could retry, but it is IMPORTANT that you only call a tool from that list.' };
  assert.equal(await plugin.afterToolCallback({ tool: tool(), toolArgs: {}, toolContext: ctx(), result: notFound }), undefined);
  assert.equal((await fail(plugin)).retry_count, 2);
});

test('the extractor sees exactly what afterToolCallback got, and its errors reject', async () => {
  const seen = [];
  const boom = new Error('extractor bug');
  const plugin = new ReflectAndRetryToolPlugin({
    resultErrorExtractor: (p) => {
      seen.push(p);
      if (p.result === 'throw') throw boom;
      return undefined;
    },
  });
  const context = ctx('x');
  const toolArgs = { a: 1 };
  const t = tool('z');
  await plugin.afterToolCallback({ tool: t, toolArgs, toolContext: context, result: { v: 1 } });
  assert.equal(seen[0].tool, t);
  assert.equal(seen[0].toolArgs, toolArgs);
  assert.equal(seen[0].toolContext, context);
  assert.deepEqual(seen[0].result, { v: 1 });
  await assert.rejects(plugin.afterToolCallback({ tool: t, toolArgs, toolContext: context, result: 'throw' }), (e) => e === boom);
});

test('a rejected failure is answered at once, even at maxRetries 0 with throwing, and is not counted', async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 0, retryPredicate: async ({ error }) => error.message !== 'fatal' });
  const r = await fail(plugin, { error: new Error('fatal'), toolArgs: { x: [1] } });
  assert.deepEqual(r, handled('Error', 'fatal', 0, notRetryableText('t', 'Error: fatal', args({ x: [1] }))));
  const transient = new Error('transient');
  await assert.rejects(fail(plugin, { error: transient }), (e) => e === transient);
  const p2 = new ReflectAndRetryToolPlugin({ maxRetries: 2, throwExceptionIfRetryExceeded: false, retryPredicate: ({ error }) => error.message !== 'fatal' });
  await fail(p2, { error: new Error('fatal') });
  await fail(p2, { error: new Error('fatal') });
  assert.equal((await fail(p2)).retry_count, 1);
  assert.equal((await fail(p2)).retry_count, 2);
  assert.deepEqual(await fail(p2), handled('Error', 'boom', 2, exceededText('t', 'Error: boom', '{}', 2)));
});

test('200 concurrent failures in global scope are each counted exactly once', async () => {
  // An async predicate makes every call suspend before it counts, so the 200
  // read-modify-writes interleave.
  const plugin = new ReflectAndRetryToolPlugin({
    maxRetries: 1000,
    trackingScope: 'global',
    retryPredicate: () => new Promise((resolve) => setImmediate(() => resolve(true))),
  });
  const all = await Promise.all(Array.from({ length: 200 }, (_, i) => fail(plugin, { context: ctx(`inv${i}`) })));
  const counts = all.map((r) => r.retry_count).sort((a, b) => a - b);
  assert.deepEqual(counts, Array.from({ length: 200 }, (_, i) => i + 1));
  // Global counts survive the end of any invocation.
  plugin.finishInterruptedInvocation('inv0');
  await plugin.afterRunCallback({ invocationContext: { invocationId: 'inv1' } });
  plugin.finishInterruptedInvocation(GLOBAL_SCOPE_KEY);
  assert.equal((await fail(plugin)).retry_count, 201);
});

test('200 concurrent invocations in invocation scope keep 200 separate counts', async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 10, retryPredicate: async () => true });
  const ids = Array.from({ length: 200 }, (_, i) => `inv${i}`);
  await Promise.all(ids.map((id) => fail(plugin, { context: ctx(id) })));
  const second = await Promise.all(ids.map((id) => fail(plugin, { context: ctx(id) })));
  assert.ok(second.every((r) => r.retry_count === 2));
});

test('finishInterruptedInvocation drops that invocation only; idempotent, never throws', async () => {
  const plugin = new ReflectAndRetryToolPlugin();
  await fail(plugin, { context: ctx('a') });
  await fail(plugin, { context: ctx('a') });
  await fail(plugin, { context: ctx('b') });
  assert.equal(plugin.finishInterruptedInvocation('a'), undefined);
  plugin.finishInterruptedInvocation('a');
  plugin.finishInterruptedInvocation('never-started');
  plugin.finishInterruptedInvocation(undefined);
  plugin.finishInterruptedInvocation(null);
  plugin.finishInterruptedInvocation({});
  plugin.finishInterruptedInvocation();
  // Called unbound, as a callback: no instance, nothing to drop, no throw.
  ['a', 'b'].forEach(plugin.finishInterruptedInvocation);
  plugin.finishInterruptedInvocation.call({}, 'b');
  assert.equal((await fail(plugin, { context: ctx('a') })).retry_count, 1);
  assert.equal((await fail(plugin, { context: ctx('b') })).retry_count, 2);
});

test('the counts of at most 10,000 invocations are kept: runs nobody finished do not hold memory forever', async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 5 });
  await fail(plugin, { context: ctx('oldest') });
  await fail(plugin, { context: ctx('second') });
  for (let i = 0; i < 9998; i++) await fail(plugin, { context: ctx(`cut-short-${i}`) });
  // 10,000 scopes: all still counted; 'oldest', counted again, is now the
  // most recently used.
  assert.equal((await fail(plugin, { context: ctx('oldest') })).retry_count, 2);
  // One more pushes out the scope counted least recently: 'second'.
  await fail(plugin, { context: ctx('newest') });
  assert.equal((await fail(plugin, { context: ctx('oldest') })).retry_count, 3);
  assert.equal((await fail(plugin, { context: ctx('second') })).retry_count, 1);
  assert.equal((await fail(plugin, { context: ctx('newest') })).retry_count, 2);
});

test('a predicate that throws rejects the callback with its error', async () => {
  const bug = new Error('predicate bug');
  const plugin = new ReflectAndRetryToolPlugin({ retryPredicate: () => {
    throw bug;
  } });
  await assert.rejects(fail(plugin), (e) => e === bug);
});

test('successes reset only their own (scope, tool), whatever else is pending', async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 10 });
  const ok = (name, id) => plugin.afterToolCallback({ tool: tool(name), toolArgs: {}, toolContext: ctx(id), result: { ok: true } });
  await fail(plugin, { name: 'a', context: ctx('i1') });
  await fail(plugin, { name: 'a', context: ctx('i2') });
  await fail(plugin, { name: 'b', context: ctx('i1') });
  await ok('a', 'i1'); // 'a' still pending in i2
  await ok('c', 'i1'); // never failed
  assert.equal((await fail(plugin, { name: 'a', context: ctx('i1') })).retry_count, 1);
  assert.equal((await fail(plugin, { name: 'a', context: ctx('i2') })).retry_count, 2);
  assert.equal((await fail(plugin, { name: 'b', context: ctx('i1') })).retry_count, 2);
  await ok('a', 'i2');
  await ok('a', 'i1');
  await ok('b', 'i1'); // nothing left anywhere
  assert.equal((await fail(plugin, { name: 'b', context: ctx('i1') })).retry_count, 1);
  // Ending an invocation, then a success of a tool whose count went with it.
  await fail(plugin, { name: 'd', context: ctx('i3') });
  await plugin.afterRunCallback({ invocationContext: { invocationId: 'i3' } });
  await ok('d', 'i3');
  await ok('b', 'i1');
  assert.equal((await fail(plugin, { name: 'b', context: ctx('i1') })).retry_count, 1);
  assert.equal((await fail(plugin, { name: 'd', context: ctx('i3') })).retry_count, 1);
});

test("beforeModelCallback: the request's toolsDict answers unknown names with a stand-in that throws ADK's error", async () => {
  const plugin = new ReflectAndRetryToolPlugin();
  const weather = { name: 'get_weather', isLongRunning: false };
  const request = { contents: [], config: { tools: [{ functionDeclarations: [{ name: 'get_weather' }] }] }, toolsDict: { get_weather: weather } };
  const config = request.config;
  assert.equal(await plugin.beforeModelCallback({ callbackContext: {}, llmRequest: request }), undefined);
  const dict = request.toolsDict;
  assert.equal(request.config, config);
  assert.deepEqual(config.tools, [{ functionDeclarations: [{ name: 'get_weather' }] }]);
  assert.equal(dict.get_weather, weather);
  assert.deepEqual(Object.keys(dict), ['get_weather']);
  assert.ok('ghost' in dict);
  const ghost = dict.ghost;
  assert.equal(ghost, dict.ghost);
  assert.equal(ghost.name, 'ghost');
  assert.equal(ghost.isLongRunning, false);
  await assert.rejects(ghost.runAsync({ args: {}, toolContext: {} }), (e) => e instanceof Error && e.name === 'Error' && e.message === 'Function ghost is not found in the toolsDict.');
  // Object.prototype's names are not the agent's tools (the model may invent
  // them too), but its methods still work on the dictionary; wrapping twice
  // wraps once.
  assert.equal(typeof dict.hasOwnProperty, 'function');
  assert.equal(dict.hasOwnProperty('get_weather'), true);
  assert.equal(dict.hasOwnProperty('ghost'), false);
  assert.equal(String(dict), '[object Object]');
  for (const name of ['toString', 'hasOwnProperty', 'constructor', '__proto__']) {
    assert.ok(name in dict, name);
    assert.equal(dict[name].name, name);
    await assert.rejects(dict[name].runAsync({ args: {}, toolContext: {} }), { message: `Function ${name} is not found in the toolsDict.` });
  }
  assert.equal(JSON.stringify(Object.keys(dict)), '["get_weather"]');
  await plugin.beforeModelCallback({ callbackContext: {}, llmRequest: request });
  assert.equal(request.toolsDict, dict);
});

test("a tool adding itself (processLlmRequest's duplicate check) finds an unknown name free; any other question finds the stand-in", async () => {
  const plugin = new ReflectAndRetryToolPlugin();
  const request = { toolsDict: { real: { name: 'real' } } };
  await plugin.beforeModelCallback({ llmRequest: request });
  const dict = request.toolsDict;
  // As BaseTool.processLlmRequest asks, and a subclass overriding it.
  const tool = {
    name: 'extra',
    processLlmRequest({ llmRequest }) {
      if (this.name in llmRequest.toolsDict) throw new Error(`Duplicate tool name: ${this.name}`);
      llmRequest.toolsDict[this.name] = this;
    },
  };
  tool.processLlmRequest({ llmRequest: request });
  assert.equal(dict.extra, tool);
  assert.throws(() => tool.processLlmRequest({ llmRequest: request }), { message: 'Duplicate tool name: extra' });
  const sub = { name: 'other', processLlmRequest(p) { return tool.processLlmRequest.call(this, p); } };
  sub.processLlmRequest({ llmRequest: request });
  assert.equal(dict.other, sub);
  // ADK's look-up of a called name (getToolAndContext), and anyone else's.
  function getToolAndContext(name) {
    return name in dict ? dict[name] : undefined;
  }
  assert.equal(getToolAndContext('ghost')?.name, 'ghost');
  assert.ok('ghost' in dict);
  // A custom stack formatter changes nothing, and is left in place.
  const custom = () => 'formatted';
  Error.prepareStackTrace = custom;
  try {
    assert.ok('ghost2' in dict);
    tool.name = 'third';
    tool.processLlmRequest({ llmRequest: request });
    assert.equal(dict.third, tool);
    assert.equal(Error.prepareStackTrace, custom);
  } finally {
    delete Error.prepareStackTrace;
  }
});

test("an unknown name's count is reset by a success of a real tool of that name", async () => {
  const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 5 });
  const request = { toolsDict: {} };
  await plugin.beforeModelCallback({ llmRequest: request });
  const ghost = request.toolsDict.shared;
  const context = ctx('inv');
  const error = new Error('Function shared is not found in the toolsDict.');
  assert.equal((await plugin.onToolErrorCallback({ tool: ghost, toolArgs: {}, toolContext: context, error })).retry_count, 1);
  assert.equal((await plugin.onToolErrorCallback({ tool: ghost, toolArgs: {}, toolContext: context, error })).retry_count, 2);
  // A sub-agent that has a tool named 'shared' succeeds with it.
  await plugin.afterToolCallback({ tool: tool('shared'), toolArgs: {}, toolContext: context, result: { ok: 1 } });
  assert.equal((await plugin.onToolErrorCallback({ tool: ghost, toolArgs: {}, toolContext: context, error })).retry_count, 1);
});
