import { type AgentTool, toolResult } from '@colloquy/core';
import { MemoryStore } from '@colloquy/core/store';
import { Type } from '@sinclair/typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestHarness, type TestHarness } from '../src/harness/index.js';
import { createScriptedModel, lastUserText } from '../src/index.js';

let harness: TestHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const echoTool: AgentTool = {
  name: 'echo',
  description: 'Echoes its text.',
  parameters: Type.Object({ text: Type.String() }),
  async execute(_id, args) {
    return toolResult({ echoed: (args as { text: string }).text });
  },
};

describe('createTestHarness', () => {
  it('answers a direct message through the memory channel with the scripted model', async () => {
    harness = await createTestHarness({ script: ['Hello! How can I help?'] });
    const turn = await harness.send('hi there');
    expect(turn.outcome.action).toBe('queued');
    expect(turn.sessionKey).toBe('agent:main:memory:dm:user-1');
    expect(turn.result).toMatchObject({ status: 'done', reply: 'Hello! How can I help?' });
    expect(turn.sent.map((m) => [m.to.to, m.text])).toEqual([['user-1', 'Hello! How can I help?']]);
    expect(lastUserText(harness.model.lastRequest ?? { messages: [] })).toContain('hi there');
    expect(harness.model.lastRequest?.model).toBe('test');
    const transcript = await harness.transcript(turn.sessionKey ?? '');
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('runs tool calls the model makes and feeds the results back', async () => {
    harness = await createTestHarness({
      script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'ping' } }] }, 'The tool said ping.'],
      runtime: { tools: () => [echoTool] },
    });
    const turn = await harness.send('use the tool');
    expect(turn.result?.status).toBe('done');
    expect(harness.model.requests[0]?.tools.map((t) => t.name)).toEqual(['echo']);
    const second = harness.model.requests[1];
    expect(second?.messages.at(-1)).toMatchObject({ role: 'toolResult', toolName: 'echo' });
    expect(JSON.stringify(second?.messages.at(-1))).toContain('ping');
    expect(turn.sent.at(-1)?.text).toBe('The tool said ping.');
    harness.model.assertDone();
  });

  it('ignores group messages that do not address the bot', async () => {
    harness = await createTestHarness({ script: ['only for mentions'] });
    const ignored = await harness.send({ text: 'chatting', chat: { type: 'group', id: 'g1' } });
    expect(ignored.outcome.action).toBe('ignored');
    expect(harness.model.callCount).toBe(0);
    const addressed = await harness.send({ text: '@colloquy_bot hello', chat: { type: 'group', id: 'g1' } });
    expect(addressed.sessionKey).toBe('agent:main:memory:group:g1');
    expect(addressed.sent.map((m) => m.text)).toEqual(['only for mentions']);
  });

  it('reports a failed turn and tells the chat when the script runs out', async () => {
    harness = await createTestHarness();
    const turn = await harness.send('anyone?');
    expect(turn.result?.status).toBe('error');
    expect(turn.result?.error).toContain('ran out of replies');
    expect(turn.sent).toHaveLength(1);
  });

  it('runs a session directly through the gateway', async () => {
    const model = createScriptedModel((request) => `you said: ${lastUserText(request)}`);
    harness = await createTestHarness({ model, store: new MemoryStore() });
    const result = await harness.run('main', 'ping');
    expect(result).toMatchObject({ status: 'done', reply: 'you said: ping' });
    expect((await harness.transcript('main')).length).toBe(2);
    expect(harness.channel.sent).toHaveLength(0);
  });

  it('closes idempotently and stops the channel', async () => {
    harness = await createTestHarness({ script: [] });
    expect(harness.channel.running).toBe(true);
    await harness.close();
    await harness.close();
    expect(harness.channel.running).toBe(false);
    expect(harness.runtime.state).toBe('stopped');
  });
});
