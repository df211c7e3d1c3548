// ReflectAndRetryToolPlugin through a real InMemoryRunner: what the model
// receives for each failure, compared with the spec's texts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as adk from '@google/adk';
import { BasePlugin, FunctionTool, InMemoryRunner, LlmAgent, ParallelAgent } from '@google/adk';
import { ReflectAndRetryToolPlugin } from '../index.js';
import { ScriptedLlm, call, runOnce } from './helpers/scripted_llm.mjs';
import { args, exceededText, handled, notFoundText, notRetryableText, retryText } from './helpers/retry_expect.mjs';

/** A tool whose execute answers from `outcomes` in turn (an Error is thrown). */
function scriptedTool(name, outcomes = []) {
  const calls = [];
  const tool = new FunctionTool({
    name,
    description: `the ${name} tool`,
    execute: async (a) => {
      calls.push(a);
      const next = outcomes.length ? outcomes.shift() : { ok: true };
      if (next instanceof Error) throw next;
      return next;
    },
  });
  tool.calls = calls;
  return tool;
}

function setup({ script, tools = [], plugins = [] }) {
  const llm = new ScriptedLlm(script);
  const agent = new LlmAgent({ name: 'agent', model: llm, tools });
  const runner = new InMemoryRunner({ agent, plugins, appName: 'app' });
  return { llm, runner };
}

/** Function responses the model received, one list per model request after the first. */
function answers(llm) {
  const out = [];
  for (let i = 1; i < llm.requests.length; i++) out.push(llm.newFunctionResponses(i).map((r) => r.response));
  return out;
}

const wrapped = (name, msg) => `Error in tool '${name}': ${msg}`;

test('a tool that fails twice then succeeds: guidance 1 and 2, then the result', async () => {
  const tool = scriptedTool('get_weather', [new Error('timeout'), new Error('bad city'), { temp: 21 }]);
  const { llm, runner } = setup({
    script: [call('get_weather', { city: 'Pari' }), call('get_weather', { city: 'Paris ' }), call('get_weather', { city: 'Paris' }), 'sunny'],
    tools: [tool],
    plugins: [new ReflectAndRetryToolPlugin()],
  });
  await runOnce(runner);
  const got = answers(llm);
  assert.equal(got.length, 3);
  const m1 = wrapped('get_weather', 'timeout');
  const m2 = wrapped('get_weather', 'bad city');
  assert.deepEqual(got[0], [handled('Error', m1, 1, retryText('get_weather', `Error: ${m1}`, args({ city: 'Pari' }), 1, 3))]);
  assert.deepEqual(got[1], [handled('Error', m2, 2, retryText('get_weather', `Error: ${m2}`, args({ city: 'Paris ' }), 2, 3))]);
  assert.deepEqual(got[2], [{ temp: 21 }]);
  // The response keys come in the spec's order.
  assert.deepEqual(Object.keys(got[0][0]), ['response_type', 'error_type', 'error_details', 'retry_count', 'reflection_guidance']);
});

test('a success resets the count: the next failure is attempt 1 again', async () => {
  const tool = scriptedTool('t', [new Error('a'), { ok: 1 }, new Error('b')]);
  const { llm, runner } = setup({
    script: [call('t'), call('t'), call('t'), 'end'],
    tools: [tool],
    plugins: [new ReflectAndRetryToolPlugin()],
  });
  await runOnce(runner);
  const got = answers(llm);
  assert.equal(got[0][0].retry_count, 1);
  assert.deepEqual(got[1], [{ ok: 1 }]);
  assert.equal(got[2][0].retry_count, 1);
});

test('past the limit with throwing: the run emits the PluginManager error event', async () => {
  const tool = scriptedTool('t', [new Error('one'), new Error('two'), new Error('three')]);
  const { llm, runner } = setup({
    script: [call('t', { n: 1 }), call('t', { n: 2 }), 'never'],
    tools: [tool],
    plugins: [new ReflectAndRetryToolPlugin({ maxRetries: 1, name: 'rr' })],
  });
  const { events } = await runOnce(runner);
  const errors = events.filter((e) => e.errorCode);
  assert.equal(errors.length, 1);
  assert.match(errors[0].errorMessage, /^Error in plugin 'rr' during 'onToolErrorCallback' callback: Error: Error in tool 't': two$/);
  // The model saw only the first failure's guidance; the second was thrown
  // and its call stays unanswered (ADK goes on after the error event).
  assert.equal(answers(llm)[0][0].retry_count, 1);
  assert.equal(llm.functionResponses().length, 1);
});

test('past the limit without throwing: exceeded guidance with retry_count = maxRetries, counting goes on', async () => {
  const tool = scriptedTool('t', [new Error('one'), new Error('two'), new Error('three')]);
  const { llm, runner } = setup({
    script: [call('t', { n: 1 }), call('t', { n: 2 }), call('t', { n: 3 }), 'ok'],
    tools: [tool],
    plugins: [new ReflectAndRetryToolPlugin({ maxRetries: 1, throwExceptionIfRetryExceeded: false })],
  });
  const { events } = await runOnce(runner);
  assert.equal(events.filter((e) => e.errorCode).length, 0);
  const got = answers(llm);
  const m2 = wrapped('t', 'two');
  const m3 = wrapped('t', 'three');
  assert.equal(got[0][0].retry_count, 1);
  assert.deepEqual(got[1], [handled('Error', m2, 1, exceededText('t', `Error: ${m2}`, args({ n: 2 }), 1))]);
  assert.deepEqual(got[2], [handled('Error', m3, 1, exceededText('t', `Error: ${m3}`, args({ n: 3 }), 1))]);
});

test('maxRetries 0: the first failure exceeds the limit', async () => {
  const tool = scriptedTool('t', [new Error('x')]);
  const { llm, runner } = setup({
    script: [call('t'), 'ok'],
    tools: [tool],
    plugins: [new ReflectAndRetryToolPlugin({ maxRetries: 0, throwExceptionIfRetryExceeded: false })],
  });
  await runOnce(runner);
  const m = wrapped('t', 'x');
  assert.deepEqual(answers(llm)[0], [handled('Error', m, 0, exceededText('t', `Error: ${m}`, '{}', 0))]);
});

test('a hallucinated tool name gets guidance, then the real tool is called; declared tools unchanged', async () => {
  const weather = scriptedTool('get_weather', [{ temp: 20 }]);
  const time = scriptedTool('get_time');
  const declared = [];
  const record = (step) => (req) => {
    declared.push(JSON.parse(JSON.stringify(req.config.tools)));
    return step;
  };
  const script = [record(call('get_wether', { city: 'Paris' })), record(call('get_weather', { city: 'Paris' })), record('done')];
  const { llm, runner } = setup({ script, tools: [weather, time], plugins: [new ReflectAndRetryToolPlugin()] });
  const { events } = await runOnce(runner);
  assert.equal(events.filter((e) => e.errorCode).length, 0);
  const msg = 'Function get_wether is not found in the toolsDict.';
  const got = answers(llm);
  assert.deepEqual(got[0], [handled('Error', msg, 1, retryText('get_wether', `Error: ${msg}`, args({ city: 'Paris' }), 1, 3))]);
  assert.equal(llm.newFunctionResponses(1)[0].name, 'get_wether');
  assert.deepEqual(got[1], [{ temp: 20 }]);
  assert.deepEqual(weather.calls, [{ city: 'Paris' }]);

  // The same declarations reach the model with and without the plugin.
  const plain = [];
  const bare = setup({
    script: [(req) => (plain.push(JSON.parse(JSON.stringify(req.config.tools))), 'x')],
    tools: [scriptedTool('get_weather'), scriptedTool('get_time')],
  });
  await runOnce(bare.runner);
  for (const d of declared) assert.deepEqual(d, plain[0]);
  assert.deepEqual(
    declared[0][0].functionDeclarations.map((f) => f.name),
    ['get_weather', 'get_time'],
  );
});

test('a tool an agent callback adds the ADK way (processLlmRequest) still works, and an unknown name is still answered', async () => {
  const extra = scriptedTool('extra', [{ v: 42 }]);
  const llm = new ScriptedLlm([call('extra'), call('ghost'), 'done']);
  const agent = new LlmAgent({
    name: 'agent',
    model: llm,
    tools: [scriptedTool('base')],
    // Runs after the plugins' beforeModelCallback, on the same request.
    beforeModelCallback: async ({ context, request }) => {
      await extra.processLlmRequest({ toolContext: context, llmRequest: request });
      return undefined;
    },
  });
  const runner = new InMemoryRunner({ agent, plugins: [new ReflectAndRetryToolPlugin()], appName: 'app' });
  const { events } = await runOnce(runner);
  assert.deepEqual(events.filter((e) => e.errorCode).map((e) => e.errorMessage), []);
  assert.deepEqual(extra.calls, [{}]);
  const got = answers(llm);
  assert.deepEqual(got[0], [{ v: 42 }]);
  const msg = 'Function ghost is not found in the toolsDict.';
  assert.deepEqual(got[1], [handled('Error', msg, 1, retryText('ghost', `Error: ${msg}`, args({}), 1, 3))]);
});

test('an unknown name is answered when an earlier plugin answered afterModelCallback, in a Workflow node too', async () => {
  class Rewrite extends BasePlugin {
    async afterModelCallback({ llmResponse }) {
      return { ...llmResponse };
    }
  }
  // ADK 2 only: a Workflow node handles the calls before the event reaches any plugin.
  const { Workflow, START } = adk;
  for (const inWorkflow of Workflow ? [false, true] : [false]) {
    const llm = new ScriptedLlm([call('ghost'), 'done']);
    const agent = new LlmAgent({ name: 'agent', model: llm, tools: [scriptedTool('real')] });
    const root = inWorkflow ? new Workflow({ name: 'wf', edges: [[START, agent]] }) : agent;
    const runner = new InMemoryRunner({ agent: root, plugins: [new Rewrite('rewrite'), new ReflectAndRetryToolPlugin()], appName: 'app' });
    const { events } = await runOnce(runner);
    assert.deepEqual(events.filter((e) => e.errorCode).map((e) => e.errorMessage), [], `in a Workflow: ${inWorkflow}`);
    const msg = 'Function ghost is not found in the toolsDict.';
    assert.deepEqual(answers(llm)[0], [handled('Error', msg, 1, retryText('ghost', `Error: ${msg}`, args({}), 1, 3))]);
  }
});

test('without the plugin ADK 2.0.0 leaves an unknown name unanswered (the gap the plugin closes)', async () => {
  const { llm, runner } = setup({ script: [call('ghost'), 'x'], tools: [scriptedTool('real')] });
  const { events } = await runOnce(runner);
  assert.ok(events.some((e) => e.errorCode && /Function ghost is not found in the toolsDict\./.test(e.errorMessage)));
  assert.equal(llm.functionResponses().length, 0);
});

for (const throwing of [true, false]) {
  test(`an unknown name past the limit answers the not-found text, never thrown (throw option ${throwing})`, async () => {
    const { llm, runner } = setup({
      script: [call('ghost', { a: 1 }), call('ghost', { a: 2 }), call('ghost', { a: 3 }), 'ok'],
      tools: [scriptedTool('alpha'), scriptedTool('beta')],
      plugins: [new ReflectAndRetryToolPlugin({ maxRetries: 1, throwExceptionIfRetryExceeded: throwing })],
    });
    const { events } = await runOnce(runner);
    assert.equal(events.filter((e) => e.errorCode).length, 0);
    const got = answers(llm);
    assert.equal(got[0][0].retry_count, 1);
    assert.deepEqual(got[1], [{ error: notFoundText('ghost', ['alpha', 'beta']) }]);
    // Not a success: the count goes on, so the next one is past the limit too.
    assert.deepEqual(got[2], [{ error: notFoundText('ghost', ['alpha', 'beta']) }]);
  });
}

test('an agent without tools: the not-found text says none', async () => {
  const { llm, runner } = setup({
    script: [call('ghost'), 'ok'],
    plugins: [new ReflectAndRetryToolPlugin({ maxRetries: 0 })],
  });
  await runOnce(runner);
  assert.deepEqual(answers(llm)[0], [{ error: notFoundText('ghost', []) }]);
});

test('the not-found answer lists the tools in declaration order, integer-like names too', async () => {
  // A JavaScript object puts keys like '9' first; Python's and Kotlin's
  // dictionaries keep the order the agent declared its tools in.
  const names = ['tool_b', '9', 'tool_a', '1'];
  const { llm, runner } = setup({
    script: [call('ghost'), 'ok'],
    tools: names.map((name) => scriptedTool(name)),
    plugins: [new ReflectAndRetryToolPlugin({ maxRetries: 0 })],
  });
  await runOnce(runner);
  assert.deepEqual(answers(llm)[0], [{ error: notFoundText('ghost', names) }]);
});

test('the not-found answer resets nothing: the real tool keeps its count', async () => {
  const tool = scriptedTool('real', [new Error('1'), new Error('2')]);
  const { llm, runner } = setup({
    script: [call('real'), call('ghost'), call('real'), 'ok'],
    tools: [tool],
    plugins: [new ReflectAndRetryToolPlugin({ maxRetries: 0, throwExceptionIfRetryExceeded: false })],
  });
  await runOnce(runner);
  const got = answers(llm);
  assert.equal(got[0][0].error_type, 'Error');
  assert.deepEqual(got[1], [{ error: notFoundText('ghost', ['real']) }]);
  assert.equal(got[2][0].retry_count, 0);
  assert.match(got[2][0].reflection_guidance, /^The tool `real` has failed consecutively 0 times/);
});

// Errors found in results ----------------------------------------------------

const extracted = [
  ['a string', 'quota exhausted', 'ToolError', 'quota exhausted', 'quota exhausted'],
  ['an object', { code: 7, why: 'nope' }, 'ToolError', { code: 7, why: 'nope' }, JSON.stringify({ code: 7, why: 'nope' }, null, 2)],
  ['an Error', new RangeError('out of range'), 'RangeError', 'out of range', 'RangeError: out of range'],
  ['a number', 404, 'ToolError', '404', '404'],
  ['a boolean', true, 'ToolError', 'true', 'true'],
];

for (const [label, value, type, details, text] of extracted) {
  for (const asPromise of [false, true]) {
    test(`resultErrorExtractor finding ${label} (${asPromise ? 'Promise' : 'sync'}) is a counted failure`, async () => {
      const tool = scriptedTool('lookup', [{ status: 'error', value }, { status: 'ok' }]);
      const seen = [];
      const extractor = (p) => {
        seen.push(p);
        const found = p.result?.status === 'error' ? p.result.value : undefined;
        return asPromise ? Promise.resolve(found) : found;
      };
      const { llm, runner } = setup({
        script: [call('lookup', { q: 1 }), call('lookup', { q: 2 }), 'ok'],
        tools: [tool],
        plugins: [new ReflectAndRetryToolPlugin({ resultErrorExtractor: extractor })],
      });
      await runOnce(runner);
      const got = answers(llm);
      assert.deepEqual(got[0], [handled(type, details, 1, retryText('lookup', text, args({ q: 1 }), 1, 3))]);
      assert.deepEqual(got[1], [{ status: 'ok' }]);
      assert.equal(seen[0].tool.name, 'lookup');
      assert.deepEqual(seen[0].toolArgs, { q: 1 });
      assert.equal(typeof seen[0].toolContext.invocationId, 'string');
    });
  }
}

test('an extracted error past the limit rejects afterToolCallback: the Error itself, else the generic Error', async () => {
  for (const [value, message] of [
    [new TypeError('typed'), "TypeError: typed"],
    ['text', 'Error: A tool result reported an error and the retry limit was exceeded.'],
  ]) {
    const tool = scriptedTool('t', [{ bad: value }]);
    const { runner } = setup({
      script: [call('t'), 'never'],
      tools: [tool],
      plugins: [new ReflectAndRetryToolPlugin({ maxRetries: 0, resultErrorExtractor: ({ result }) => result?.bad })],
    });
    const { events } = await runOnce(runner);
    const errors = events.filter((e) => e.errorCode);
    assert.equal(errors.length, 1);
    assert.equal(errors[0].errorMessage, `Error in plugin 'reflect_retry_tool_plugin' during 'afterToolCallback' callback: ${message}`);
  }
});

for (const asPromise of [false, true]) {
  test(`retryPredicate returning false (${asPromise ? 'Promise' : 'sync'}): not counted, retry_count 0, never thrown`, async () => {
    const tool = scriptedTool('t', [new Error('fatal'), new Error('transient'), new Error('fatal')]);
    const predicate = ({ error }) => {
      const retryable = !error.message.includes('fatal');
      return asPromise ? Promise.resolve(retryable) : retryable;
    };
    const { llm, runner } = setup({
      script: [call('t', { i: 1 }), call('t', { i: 2 }), call('t', { i: 3 }), 'ok'],
      tools: [tool],
      plugins: [new ReflectAndRetryToolPlugin({ maxRetries: 1, retryPredicate: predicate })],
    });
    const { events } = await runOnce(runner);
    assert.equal(events.filter((e) => e.errorCode).length, 0);
    const got = answers(llm);
    const fatal = wrapped('t', 'fatal');
    assert.deepEqual(got[0], [handled('Error', fatal, 0, notRetryableText('t', `Error: ${fatal}`, args({ i: 1 })))]);
    // The rejected failure was not counted: this is attempt 1 of 1.
    assert.equal(got[1][0].retry_count, 1);
    assert.deepEqual(got[2], [handled('Error', fatal, 0, notRetryableText('t', `Error: ${fatal}`, args({ i: 3 })))]);
  });
}

test('only false rejects: other predicate answers mean retryable', async () => {
  for (const verdict of [0, null, undefined, '', 'no', Promise.resolve(0)]) {
    const tool = scriptedTool('t', [new Error('x')]);
    const { llm, runner } = setup({
      script: [call('t'), 'ok'],
      tools: [tool],
      plugins: [new ReflectAndRetryToolPlugin({ retryPredicate: () => verdict })],
    });
    await runOnce(runner);
    assert.equal(answers(llm)[0][0].retry_count, 1, `verdict ${String(verdict)}`);
  }
});

test('two tools are counted apart, and parallel calls of one turn each get an answer', async () => {
  const a = scriptedTool('a', [new Error('a1'), new Error('a2')]);
  const b = scriptedTool('b', [new Error('b1')]);
  const { llm, runner } = setup({
    script: [[call('a'), call('b')], call('a'), 'ok'],
    tools: [a, b],
    plugins: [new ReflectAndRetryToolPlugin()],
  });
  await runOnce(runner);
  const got = answers(llm);
  assert.deepEqual(
    got[0].map((r) => [r.error_details, r.retry_count]),
    [
      [wrapped('a', 'a1'), 1],
      [wrapped('b', 'b1'), 1],
    ],
  );
  assert.equal(got[1][0].retry_count, 2);
});

for (const [scope, second] of [
  ['invocation', 1],
  ['global', 2],
]) {
  test(`${scope} scope across two runs: the second run's failure is attempt ${second}`, async () => {
    const tool = scriptedTool('t', [new Error('x'), new Error('y')]);
    const { llm, runner } = setup({
      script: [call('t'), 'first run done', call('t'), 'second run done'],
      tools: [tool],
      plugins: [new ReflectAndRetryToolPlugin({ trackingScope: scope })],
    });
    await runOnce(runner);
    await runOnce(runner);
    assert.equal(llm.functionResponses(1)[0].response.retry_count, 1);
    assert.equal(llm.functionResponses(3).at(-1).response.retry_count, second);
  });
}

test('two plugin instances keep separate counts', async () => {
  const first = new ReflectAndRetryToolPlugin({ trackingScope: 'global' });
  const second = new ReflectAndRetryToolPlugin({ trackingScope: 'global', name: 'second' });
  const ctx = { invocationId: 'i' };
  const err = () => new Error('e');
  assert.equal((await first.onToolErrorCallback({ tool: { name: 't' }, toolArgs: {}, toolContext: ctx, error: err() })).retry_count, 1);
  assert.equal((await first.onToolErrorCallback({ tool: { name: 't' }, toolArgs: {}, toolContext: ctx, error: err() })).retry_count, 2);
  assert.equal((await second.onToolErrorCallback({ tool: { name: 't' }, toolArgs: {}, toolContext: ctx, error: err() })).retry_count, 1);
});

test("afterRunCallback drops the invocation's counts", async () => {
  const plugin = new ReflectAndRetryToolPlugin();
  const tool = scriptedTool('t', [new Error('x'), new Error('y')]);
  const { runner } = setup({ script: [call('t'), call('t'), 'done'], tools: [tool], plugins: [plugin] });
  const { events } = await runOnce(runner);
  const invocationId = events[0].invocationId;
  // The run left 't' at 2; after afterRunCallback the same id starts again at 1.
  const again = await plugin.onToolErrorCallback({ tool: { name: 't' }, toolArgs: {}, toolContext: { invocationId }, error: new Error('z') });
  assert.equal(again.retry_count, 1);
  // Control: without a run end, the count of that id goes on.
  const next = await plugin.onToolErrorCallback({ tool: { name: 't' }, toolArgs: {}, toolContext: { invocationId }, error: new Error('z') });
  assert.equal(next.retry_count, 2);
});

class Recorder extends BasePlugin {
  constructor() {
    super('recorder');
    this.seen = [];
  }
}
for (const name of [
  'onUserMessageCallback', 'beforeRunCallback', 'onEventCallback', 'afterRunCallback', 'beforeAgentCallback',
  'afterAgentCallback', 'beforeNodeCallback', 'afterNodeCallback', 'beforeModelCallback', 'afterModelCallback',
  'onModelErrorCallback', 'beforeToolSelection', 'beforeContextCompaction', 'afterContextCompaction',
  'beforeToolCallback', 'afterToolCallback', 'onToolErrorCallback',
]) {
  Recorder.prototype[name] = async function (params) {
    this.seen.push([name, params]);
    return undefined;
  };
}

test('a plugin after this one sees every callback this one passes on', async () => {
  const script = () => [call('t', { k: 1 }), call('t', { k: 2 }), 'done'];
  const alone = new Recorder();
  await runOnce(setup({ script: script(), tools: [scriptedTool('t', [new Error('x')])], plugins: [alone] }).runner);
  const after = new Recorder();
  const { llm, runner } = setup({
    script: script(),
    tools: [scriptedTool('t', [new Error('x')])],
    plugins: [new ReflectAndRetryToolPlugin(), after],
  });
  await runOnce(runner);
  // Everything but the onToolErrorCallback the retry plugin answered.
  const names = (r) => r.seen.map(([n]) => n);
  assert.deepEqual(names(after), names(alone).filter((n) => n !== 'onToolErrorCallback'));
  assert.ok(names(alone).includes('onToolErrorCallback'));
  // The guidance it returned reaches the next plugin's afterToolCallback as the result.
  const afterTool = after.seen.filter(([n]) => n === 'afterToolCallback').map(([, p]) => p.result);
  assert.equal(afterTool[0].response_type, 'ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN');
  assert.deepEqual(afterTool[1], { ok: true });
  assert.equal(answers(llm)[0][0].retry_count, 1);
});

test('an unknown name and a real tool in one turn: both are answered, in order', async () => {
  const real = scriptedTool('real', [{ v: 1 }]);
  const { llm, runner } = setup({
    script: [[call('ghost', { q: 1 }), call('real', { q: 2 })], 'ok'],
    tools: [real],
    plugins: [new ReflectAndRetryToolPlugin({ trackingScope: 'global' })],
  });
  const { events } = await runOnce(runner);
  assert.equal(events.filter((e) => e.errorCode).length, 0);
  const got = llm.newFunctionResponses(1);
  assert.deepEqual(got.map((r) => r.name), ['ghost', 'real']);
  assert.equal(got[0].response.error_details, 'Function ghost is not found in the toolsDict.');
  assert.equal(got[0].response.retry_count, 1);
  assert.deepEqual(got[1].response, { v: 1 });
});

test('parallel branches of one run share invocation-scope counts (retry.md)', async () => {
  const branch = (name) => {
    const llm = new ScriptedLlm([call('fail', {}), `${name} done`]);
    return { llm, agent: new LlmAgent({ name, model: llm, tools: [scriptedTool('fail', [new Error(name)])] }) };
  };
  const a = branch('a');
  const b = branch('b');
  const root = new ParallelAgent({ name: 'par', subAgents: [a.agent, b.agent] });
  const runner = new InMemoryRunner({ agent: root, plugins: [new ReflectAndRetryToolPlugin()], appName: 'app' });
  await runOnce(runner);
  // One failure each, counted under one invocation id: 1 and 2, in whichever order they ran.
  const counts = [...answers(a.llm), ...answers(b.llm)].flat().map((r) => r.retry_count);
  assert.deepEqual(counts.sort(), [1, 2]);
});

// Only the agent's own tools are known: a name Object.prototype answers is
// invented like any other (retry.md "Unregistered tool names").
for (const name of ['toString', 'constructor', 'hasOwnProperty', '__proto__']) {
  test(`a tool name Object.prototype has (${name}) is an unknown name`, async () => {
    const { llm, runner } = setup({
      script: [call(name, { a: 1 }), call(name, { a: 2 }), 'ok'],
      tools: [scriptedTool('real')],
      plugins: [new ReflectAndRetryToolPlugin({ maxRetries: 1 })],
    });
    const { events } = await runOnce(runner);
    assert.deepEqual(events.filter((e) => e.errorCode).map((e) => e.errorMessage), []);
    const got = answers(llm);
    const first = got[0][0];
    assert.deepEqual([first.error_type, first.error_details, first.retry_count], ['Error', `Function ${name} is not found in the toolsDict.`, 1]);
    assert.ok(first.reflection_guidance.startsWith(`The call to tool \`${name}\` failed.`), first.reflection_guidance);
    assert.deepEqual(got[1], [{ error: notFoundText(name, ['real']) }]);
  });
}
