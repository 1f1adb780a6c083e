import { describe, expect, it } from 'vitest';
import { jidKind, jidUser, normalizePeerEntry } from './jid.js';

describe('jidKind', () => {
  it.each([
    ['15551234567@s.whatsapp.net', 'phone'],
    ['15551234567:12@s.whatsapp.net', 'phone'],
    ['15551234567@c.us', 'phone'],
    ['123456789@lid', 'lid'],
    ['123456789:3@lid', 'lid'],
    ['120363041234567890@g.us', 'group'],
    ['status@broadcast', 'other'],
    ['1234@broadcast', 'other'],
    ['1203630@newsletter', 'other'],
    ['', 'other'],
  ])('classifies %j as %s', (jid, kind) => {
    expect(jidKind(jid)).toBe(kind);
  });

  it('drops the device from the user part', () => {
    expect(jidUser('15551234567:12@s.whatsapp.net')).toBe('15551234567');
  });
});

describe('normalizePeerEntry', () => {
  it.each([
    ['+1 (555) 123-4567', '15551234567'],
    ['15551234567', '15551234567'],
    ['15551234567@s.whatsapp.net', '15551234567'],
    ['15551234567:4@s.whatsapp.net', '15551234567'],
    ['123456@lid', '123456@lid'],
    ['  +44 20 7946 0958 ', '442079460958'],
  ])('reads %j as %j', (entry, expected) => {
    expect(normalizePeerEntry(entry)).toBe(expected);
  });

  it.each(['alice', '123', '120363041234567890@g.us', 'status@broadcast'])('rejects %j', (entry) => {
    expect(normalizePeerEntry(entry)).toBeUndefined();
  });
});
