import { describe, expect, it } from 'vitest';
import { parseClientFrame } from './parse-client-frame.js';

const limits = { maxMessageChars: 20 };
const parse = (value: unknown) =>
  parseClientFrame(typeof value === 'string' ? value : JSON.stringify(value), false, limits);

describe('client frame parsing', () => {
  it('accepts a message and trims and normalises its text', () => {
    expect(parse({ type: 'message', text: '  hi\r\nthere ', clientId: 'c-1' })).toEqual({
      ok: true,
      frame: { type: 'message', text: 'hi\nthere', clientId: 'c-1' },
    });
  });

  it('answers invalid JSON with invalid_json', () => {
    expect(parse('{"type": "message", ')).toMatchObject({ ok: false, code: 'invalid_json' });
    expect(parseClientFrame(Buffer.from([0xff, 0xfe, 0x00]), false, limits)).toMatchObject({
      ok: false,
      code: 'invalid_json',
    });
  });

  it('refuses binary frames, non-objects and unknown types', () => {
    expect(parseClientFrame(Buffer.from('{}'), true, limits)).toMatchObject({
      ok: false,
      code: 'invalid_frame',
    });
    for (const bad of [[], 'null', 42, { text: 'x' }, { type: 7 }, { type: 'shutdown' }]) {
      expect(parse(bad)).toMatchObject({ ok: false, code: 'invalid_frame' });
    }
  });

  it('refuses a message over the limit with too_long and keeps its clientId', () => {
    expect(parse({ type: 'message', text: 'x'.repeat(21), clientId: 'c2' })).toMatchObject({
      ok: false,
      code: 'too_long',
      clientId: 'c2',
    });
    expect(parse({ type: 'message', text: 'x'.repeat(20) })).toMatchObject({ ok: true });
  });

  it('refuses empty messages, missing text and bad client ids', () => {
    expect(parse({ type: 'message', text: '   ' })).toMatchObject({ ok: false, code: 'invalid_frame' });
    expect(parse({ type: 'message', text: 5 })).toMatchObject({ ok: false, code: 'invalid_frame' });
    expect(parse({ type: 'message', text: 'hi', clientId: '<script>' })).toMatchObject({
      ok: false,
      code: 'invalid_frame',
    });
  });

  it('cleans profile names and refuses empty or long ones', () => {
    expect(parse({ type: 'profile', name: ' Ada \u0007  Lovelace ' })).toEqual({
      ok: true,
      frame: { type: 'profile', name: 'Ada Lovelace' },
    });
    expect(parse({ type: 'profile', name: '\u0000' })).toMatchObject({ ok: false });
    expect(parse({ type: 'profile', name: 'n'.repeat(41) })).toMatchObject({ ok: false });
  });

  it('accepts a tree frame with a session key, or without one to stop watching', () => {
    expect(parse({ type: 'tree', key: 'agent:main:main' })).toEqual({
      ok: true,
      frame: { type: 'tree', key: 'agent:main:main' },
    });
    expect(parse({ type: 'tree' })).toEqual({ ok: true, frame: { type: 'tree' } });
    for (const key of ['', 5, 'k'.repeat(513)]) {
      expect(parse({ type: 'tree', key })).toMatchObject({ ok: false, code: 'invalid_frame' });
    }
  });

  it('accepts the bodiless frames and drops extra fields', () => {
    for (const type of ['typing', 'ping', 'sessions.refresh']) {
      expect(parse({ type, extra: true })).toEqual({ ok: true, frame: { type } });
    }
  });
});
