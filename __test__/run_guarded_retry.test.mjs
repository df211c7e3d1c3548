// runGuarded with the retry plugin: invocations that never reach
// afterRunCallback still have their failure counts dropped. The observable is
// honest: a later failure reported under the same invocation id starts again
// at retry_count 1 (it would continue the old count otherwise; each test has
// the control run without runGuarded).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BasePlugin, FunctionTool, InMemoryRunner, LlmAgent } from '@google/adk';
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
