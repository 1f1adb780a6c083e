import { describe, expect, it } from 'vitest';
import { classifyClose, closeStatusCode, isTransientSendFailure } from './close-reason.js';

const boom = (statusCode: number, message = 'Connection Failure'): Error =>
  Object.assign(new Error(message), { isBoom: true, output: { statusCode } });

describe('classifyClose', () => {
  it('stops for good when WhatsApp logged the device out', () => {
    expect(classifyClose(boom(401)).action).toBe('logged-out');
  });

  it('reconnects at once when WhatsApp asks for a restart after linking', () => {
    expect(classifyClose(boom(515))).toMatchObject({ action: 'reconnect', immediate: true });
  });

  it.each([428, 408, 503])('reconnects with backoff after close code %i', (code) => {
    expect(classifyClose(boom(code))).toMatchObject({ action: 'reconnect', immediate: false, code });
  });

  it('reconnects with backoff when the error carries no code', () => {
    expect(classifyClose(new Error('socket hang up'))).toMatchObject({
      action: 'reconnect',
      reason: 'socket hang up',
    });
    expect(closeStatusCode(undefined)).toBeUndefined();
  });

  it.each([500, 411])('asks for a re-link instead of retrying forever after close code %i', (code) => {
    expect(classifyClose(boom(code))).toMatchObject({ action: 'relink', code });
  });

  it('stops instead of fighting another session that replaced this one', () => {
    const action = classifyClose(boom(440));
    expect(action.action).toBe('stop');
    expect(action.reason).toContain('another WhatsApp Web session');
  });
});

describe('isTransientSendFailure', () => {
  it.each([428, 408, 515, 503, 429])('takes a send that failed with %i as worth trying again', (code) => {
    expect(isTransientSendFailure(boom(code))).toBe(true);
  });

  it.each([401, 403, 404, 440, 500])('takes a send that failed with %i as final', (code) => {
    expect(isTransientSendFailure(boom(code))).toBe(false);
  });

  it('takes a failure without a status code as final', () => {
    expect(isTransientSendFailure(new Error('WhatsApp returned no message id'))).toBe(false);
  });
});
