import { isColloquyError } from '@colloquy/core';
import type { ModelRequest, ModelStreamEvent } from '@colloquy/core/model';
import { describe, expect, it } from 'vitest';
import { createScriptedModel, lastUserText } from './scripted-model.js';

const ask = (text: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'scripted/test',
  system: 'sys',
  messages: [{ role: 'user', content: text }],
  tools: [],
  ...extra,
});

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

async function errorOf(events: AsyncIterable<ModelStreamEvent>): Promise<unknown> {
  try {
    await collect(events);
  } catch (error) {
    return error;
  }
  throw new Error('expected the turn to fail');
}

describe('createScriptedModel', () => {
  it('answers turns in script order with text, tool calls and a finish', async () => {
    const model = createScriptedModel([
      { text: ['Let me ', 'check.'], toolCalls: [{ name: 'sessions_list', arguments: { limit: 2 } }] },
      'Done.',
    ]);
    const first = await collect(model.streamTurn(ask('how many?')));
    expect(first.slice(0, 3)).toEqual([
      { type: 'text-delta', text: 'Let me ' },
      { type: 'text-delta', text: 'check.' },
      { type: 'tool-call', id: 'call_0_0', name: 'sessions_list', arguments: { limit: 2 } },
    ]);
    expect(first[3]).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
    const second = await collect(model.streamTurn(ask('and?')));
    expect(second[0]).toEqual({ type: 'text-delta', text: 'Done.' });
    expect(second[1]).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(model.callCount).toBe(2);
    expect(() => model.assertDone()).not.toThrow();
  });

  it('estimates usage unless the step gives it', async () => {
    const model = createScriptedModel([
      'abcdefgh',
      { text: 'x', usage: { inputTokens: 100, outputTokens: 7 } },
    ]);
    const [, estimated] = await collect(model.streamTurn(ask('12345678')));
    expect(estimated).toMatchObject({
      usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5, contextTokens: 3 },
    });
    const [, given] = await collect(model.streamTurn(ask('x')));
    expect(given).toMatchObject({ usage: { inputTokens: 100, outputTokens: 7, totalTokens: 107 } });
  });

  it('records every request, copying its arrays and leaving out the signal', async () => {
    const model = createScriptedModel(['a']);
    const request = ask('hello', { signal: new AbortController().signal });
    await collect(model.streamTurn(request));
    request.messages.push({ role: 'user', content: 'mutated later' });
    expect(model.lastRequest?.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(model.lastRequest && 'signal' in model.lastRequest).toBe(false);
    expect(lastUserText(model.requests[0] as ModelRequest)).toBe('hello');
  });

  it('computes replies with a function script for every turn', async () => {
    const model = createScriptedModel((request, turn) => `#${turn.index}: ${lastUserText(request)}`);
    expect((await collect(model.streamTurn(ask('one'))))[0]).toEqual({ type: 'text-delta', text: '#0: one' });
    expect((await collect(model.streamTurn(ask('two'))))[0]).toEqual({ type: 'text-delta', text: '#1: two' });
    expect(model.remaining).toBe(Number.POSITIVE_INFINITY);
  });

  it('accepts function steps inside a list', async () => {
    const model = createScriptedModel([(request) => ({ text: `echo ${lastUserText(request)}` })]);
    expect((await collect(model.streamTurn(ask('hi'))))[0]).toEqual({ type: 'text-delta', text: 'echo hi' });
  });

  it('fails with a clear MODEL_ERROR when the script runs out', async () => {
    const model = createScriptedModel(['only one']);
    await collect(model.streamTurn(ask('first')));
    const error = await errorOf(model.streamTurn(ask('second question')));
    expect(isColloquyError(error) && error.code).toBe('MODEL_ERROR');
    expect((error as Error).message).toContain('ran out of replies at turn #1');
    expect((error as Error).message).toContain('second question');
    model.push('more');
    expect((await collect(model.streamTurn(ask('third'))))[0]).toEqual({ type: 'text-delta', text: 'more' });
  });

  it('throws scripted errors after streaming the reply text', async () => {
    const model = createScriptedModel([
      { error: { code: 'RATE_LIMITED', details: { retryAfterMs: 1000 } } },
      { text: 'partial', error: new Error('boom') },
    ]);
    const limited = await errorOf(model.streamTurn(ask('a')));
    expect(isColloquyError(limited) && [limited.code, limited.details.retryAfterMs]).toEqual([
      'RATE_LIMITED',
      1000,
    ]);
    const seen: ModelStreamEvent[] = [];
    await expect(
      (async () => {
        for await (const event of model.streamTurn(ask('b'))) seen.push(event);
      })(),
    ).rejects.toThrow('boom');
    expect(seen).toEqual([{ type: 'text-delta', text: 'partial' }]);
  });

  it('honours abort signals, before and during a delay', async () => {
    const model = createScriptedModel([{ text: 'slow', delayMs: 5_000 }, 'unused']);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 20);
    const started = Date.now();
    const error = await errorOf(model.streamTurn(ask('x', { signal: controller.signal })));
    expect(isColloquyError(error) && error.code).toBe('ABORTED');
    expect(Date.now() - started).toBeLessThan(1_000);
    const already = await errorOf(model.streamTurn(ask('y', { signal: AbortSignal.abort() })));
    expect(isColloquyError(already) && already.code).toBe('ABORTED');
  });

  it('is zero-latency without delays', async () => {
    const model = createScriptedModel(() => 'ok');
    const started = performance.now();
    for (let i = 0; i < 1_000; i++) await collect(model.streamTurn(ask('x')));
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('checks the next request with expectNextRequest', async () => {
    const model = createScriptedModel(['a', 'b']);
    const ok = model.expectNextRequest((r) => lastUserText(r) === 'first');
    await collect(model.streamTurn(ask('first')));
    expect(lastUserText(await ok)).toBe('first');

    const bad = model.expectNextRequest((r) => lastUserText(r) === 'nope');
    const turnError = await errorOf(model.streamTurn(ask('second')));
    expect(isColloquyError(turnError) && turnError.code).toBe('MODEL_ERROR');
    await expect(bad).rejects.toThrow('did not match');
  });

  it('waits for requests and reports unused steps', async () => {
    const model = createScriptedModel(['a', 'b']);
    const waiting = model.waitForRequests(1);
    void collect(model.streamTurn(ask('x')));
    expect((await waiting).length).toBe(1);
    expect(() => model.assertDone()).toThrow('1 unused step');
    await expect(model.waitForRequests(5, 30)).rejects.toThrow('got 1 of 5');
  });

  it('keeps only the latest keepRequests requests, and counts and numbers them all', async () => {
    const model = createScriptedModel((_request, turn) => `#${turn.index}`, { keepRequests: 2 });
    const waiting = model.waitForRequests(5);
    for (const text of ['a', 'b', 'c', 'd', 'e']) await collect(model.streamTurn(ask(text)));
    expect(model.requests.map(lastUserText)).toEqual(['d', 'e']);
    expect(model.callCount).toBe(5);
    expect((await waiting).map(lastUserText)).toEqual(['d', 'e']);
    expect((await collect(model.streamTurn(ask('f'))))[0]).toEqual({ type: 'text-delta', text: '#5' });
    expect(() => createScriptedModel(['a'], { keepRequests: -1 })).toThrow('keepRequests');
    const none = createScriptedModel(['a'], { keepRequests: 0 });
    await collect(none.streamTurn(ask('x')));
    expect([none.requests.length, none.lastRequest, none.callCount]).toEqual([0, undefined, 1]);
  });
});
