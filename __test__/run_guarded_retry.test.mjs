// runGuarded with the retry plugin: invocations that never reach
// afterRunCallback still have their failure counts dropped. The observable is
// honest: a later failure reported under the same invocation id starts again
// at retry_count 1 (it would continue the old count otherwise; each test has
// the control run without runGuarded).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BasePlugin, FunctionTool, InMemoryRunner, LlmAgent, ParallelAgent } from '@google/adk';
import { ReflectAndRetryToolPlugin, runGuarded } from '../index.js';
import { ScriptedLlm, call } from './helpers/scripted_llm.mjs';

function failingTool() {
  return new FunctionTool({
    name: 't',
    description: 'always fails',
    execute: async () => {
      throw new Error('down');
    },
  });
}

async function request(runner) {
  const session = await runner.sessionService.createSession({ appName: runner.appName, userId: 'u' });
  return { userId: 'u', sessionId: session.id, newMessage: { role: 'user', parts: [{ text: 'hi' }] } };
}

const failAgain = (plugin, invocationId) =>
  plugin.onToolErrorCallback({ tool: { name: 't' }, toolArgs: {}, toolContext: { invocationId }, error: new Error('again') });

const hasFunctionResponse = (ev) => (ev.content?.parts ?? []).some((p) => p.functionResponse);

for (const guarded of [true, false]) {
  test(`a consumer that breaks out early (${guarded ? 'runGuarded' : 'plain runAsync, control'})`, async () => {
    const plugin = new ReflectAndRetryToolPlugin();
    const llm = new ScriptedLlm([call('t'), call('t'), 'done']);
    const runner = new InMemoryRunner({ agent: new LlmAgent({ name: 'a', model: llm, tools: [failingTool()] }), plugins: [plugin] });
    const req = await request(runner);
    const events = guarded ? runGuarded(runner, req) : runner.runAsync(req);
    let invocationId;
    let answer;
    for await (const ev of events) {
      invocationId ??= ev.invocationId;
      if (hasFunctionResponse(ev)) {
        answer = ev.content.parts[0].functionResponse.response;
        break;
      }
    }
    assert.equal(answer.retry_count, 1);
    assert.equal((await failAgain(plugin, invocationId)).retry_count, guarded ? 1 : 2);
  });
}

/** Seeds two failures for the run's invocation, then throws before its first event. */
class ThrowsBeforeRun extends BasePlugin {
  constructor(retry) {
    super('throws_before_run');
    this.retry = retry;
  }
  async beforeRunCallback({ invocationContext }) {
    this.invocationId = invocationContext.invocationId;
    await failAgain(this.retry, this.invocationId);
    await failAgain(this.retry, this.invocationId);
    throw new Error('no run today');
  }
}

for (const guarded of [true, false]) {
  test(`another plugin throws in beforeRunCallback (${guarded ? 'runGuarded' : 'plain runAsync, control'})`, async () => {
    const retry = new ReflectAndRetryToolPlugin();
    const finished = [];
    const finish = retry.finishInterruptedInvocation.bind(retry);
    retry.finishInterruptedInvocation = (id) => (finished.push(id), finish(id));
    const thrower = new ThrowsBeforeRun(retry);
    // The thrower runs first, so the retry plugin's beforeRunCallback is never reached.
    const runner = new InMemoryRunner({
      agent: new LlmAgent({ name: 'a', model: new ScriptedLlm(['x']), tools: [failingTool()] }),
      plugins: [thrower, retry],
    });
    const req = await request(runner);
    const seen = [];
    await assert.rejects(async () => {
      for await (const ev of guarded ? runGuarded(runner, req) : runner.runAsync(req)) seen.push(ev);
    }, /Error in plugin 'throws_before_run' during 'beforeRunCallback' callback: Error: no run today/);
    assert.equal(seen.length, 0);
    assert.equal(typeof thrower.invocationId, 'string');
    assert.deepEqual(finished, guarded ? [thrower.invocationId] : []);
    assert.equal((await failAgain(retry, thrower.invocationId)).retry_count, guarded ? 1 : 3);
  });
}

test('runGuarded yields what runAsync yields and a drained run keeps no counts', async () => {
  // api.md lists it as an async generator (function).
  assert.equal(Object.getPrototypeOf(runGuarded), Object.getPrototypeOf(async function* () {}));
  const plugin = new ReflectAndRetryToolPlugin({ throwExceptionIfRetryExceeded: false, maxRetries: 1 });
  const llm = new ScriptedLlm([call('t'), call('t'), 'done']);
  const runner = new InMemoryRunner({ agent: new LlmAgent({ name: 'a', model: llm, tools: [failingTool()] }), plugins: [plugin] });
  const events = [];
  for await (const ev of runGuarded(runner, await request(runner))) events.push(ev);
  assert.deepEqual(
    events.map((e) => e.author),
    ['a', 'a', 'a', 'a', 'a'],
  );
  const answers = events.filter(hasFunctionResponse).map((e) => e.content.parts[0].functionResponse.response.retry_count);
  assert.deepEqual(answers, [1, 1]);
  assert.equal((await failAgain(plugin, events[0].invocationId)).retry_count, 1);
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A parallel branch's tool still running when the consumer breaks out fails
// after its run was finished: it is answered, but no count of that finished
// run is kept (nobody would end it again). A probe under the same id shows
// it: 1 each time, where a kept scope would go on counting (2, then 3).
for (const guarded of [true, false]) {
  test(`a tool that fails after its run was finished keeps no count (${guarded ? 'runGuarded' : 'manual finishInterruptedInvocation'})`, async () => {
    const plugin = new ReflectAndRetryToolPlugin({ maxRetries: 9 });
    let failedLate = false;
    const slow = new FunctionTool({
      name: 't',
      description: 'fails late',
      execute: async () => {
        await sleep(100);
        failedLate = true;
        throw new Error('late');
      },
    });
    const quick = new LlmAgent({ name: 'quick', model: new ScriptedLlm([async () => (await sleep(10), 'quick')]) });
    const slowAgent = new LlmAgent({ name: 'slow', model: new ScriptedLlm([call('t'), 'done']), tools: [slow] });
    const runner = new InMemoryRunner({ agent: new ParallelAgent({ name: 'par', subAgents: [quick, slowAgent] }), plugins: [plugin] });
    const req = await request(runner);
    let invocationId;
    try {
      for await (const ev of guarded ? runGuarded(runner, req) : runner.runAsync(req)) {
        invocationId ??= ev.invocationId;
        if (ev.content?.parts?.[0]?.text === 'quick') break;
      }
    } finally {
      if (!guarded) plugin.finishInterruptedInvocation(invocationId);
    }
    assert.equal(failedLate, false, 'the tool was still running when the run was finished');
    for (let i = 0; i < 50 && !failedLate; i++) await sleep(20);
    assert.equal(failedLate, true);
    await sleep(20);
    assert.equal((await failAgain(plugin, invocationId)).retry_count, 1);
    assert.equal((await failAgain(plugin, invocationId)).retry_count, 1);
  });
}

test('an asynchronous retryPredicate still pending when the run is finished keeps no count', async () => {
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  const plugin = new ReflectAndRetryToolPlugin({ retryPredicate: async () => (await gate, true) });
  const pending = failAgain(plugin, 'inv-late');
  plugin.finishInterruptedInvocation('inv-late');
  release();
  assert.equal((await pending).retry_count, 1);
  assert.equal((await failAgain(plugin, 'inv-late')).retry_count, 1);
  // Another run's counts go on as before.
  assert.equal((await failAgain(plugin, 'inv-other')).retry_count, 1);
  assert.equal((await failAgain(plugin, 'inv-other')).retry_count, 2);
});

test('a run started again under a finished id (a resumed invocation) counts again', async () => {
  const plugin = new ReflectAndRetryToolPlugin();
  plugin.finishInterruptedInvocation('inv-resumed');
  assert.equal((await failAgain(plugin, 'inv-resumed')).retry_count, 1);
  assert.equal((await failAgain(plugin, 'inv-resumed')).retry_count, 1);
  assert.equal(await plugin.beforeRunCallback({ invocationContext: { invocationId: 'inv-resumed' } }), undefined);
  assert.equal((await failAgain(plugin, 'inv-resumed')).retry_count, 1);
  assert.equal((await failAgain(plugin, 'inv-resumed')).retry_count, 2);
});
