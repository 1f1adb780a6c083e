import type { ClientFrame, ErrorFrameCode } from './frames.js';

/** The outcome of parsing one inbound frame. */
export type ParsedFrame =
  | { ok: true; frame: ClientFrame }
  | { ok: false; code: ErrorFrameCode; message: string; clientId?: string };

/** Limits applied while parsing. */
export interface FrameLimits {
  maxMessageChars: number;
}

const CLIENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_NAME_CHARS = 40;
const MAX_KEY_CHARS = 512;

/**
 * Parses and validates one frame from a browser. Never throws: a bad frame becomes an error value
 * that the server answers with an `error` frame, keeping the connection open.
 *
 * @param data - the raw frame payload
 * @param isBinary - true for binary frames (always refused)
 * @param limits - the message size limit
 * @returns the frame, or an error code and a message for the page
 */
export function parseClientFrame(data: Buffer | string, isBinary: boolean, limits: FrameLimits): ParsedFrame {
  if (isBinary) return fail('invalid_frame', 'Binary frames are not supported; send JSON text frames.');
  let value: unknown;
  try {
    value = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'));
  } catch {
    return fail('invalid_json', 'The frame is not valid JSON.');
  }
  if (!isRecord(value) || typeof value.type !== 'string') {
    return fail('invalid_frame', 'A frame must be a JSON object with a string "type".');
  }
  switch (value.type) {
    case 'message':
      return parseMessage(value, limits);
    case 'typing':
    case 'ping':
    case 'sessions.refresh':
      return { ok: true, frame: { type: value.type } };
    case 'profile': {
      const name = typeof value.name === 'string' ? cleanName(value.name) : '';
      if (name.length === 0 || name.length > MAX_NAME_CHARS) {
        return fail('invalid_frame', `A name must be 1 to ${MAX_NAME_CHARS} characters.`);
      }
      return { ok: true, frame: { type: 'profile', name } };
    }
    case 'transcript':
      if (typeof value.key !== 'string' || value.key.length === 0 || value.key.length > MAX_KEY_CHARS) {
        return fail(
          'invalid_frame',
          `A transcript frame needs a session "key" of 1 to ${MAX_KEY_CHARS} characters.`,
        );
      }
      return { ok: true, frame: { type: 'transcript', key: value.key } };
    case 'tree':
      if (value.key === undefined) return { ok: true, frame: { type: 'tree' } };
      if (typeof value.key !== 'string' || value.key.length === 0 || value.key.length > MAX_KEY_CHARS) {
        return fail(
          'invalid_frame',
          `A tree frame needs a session "key" of 1 to ${MAX_KEY_CHARS} characters, or no key to stop watching.`,
        );
      }
      return { ok: true, frame: { type: 'tree', key: value.key } };
    default:
      return fail('invalid_frame', 'Unknown frame type; see the web chat protocol in the plugin README.');
  }
}

function parseMessage(value: Record<string, unknown>, limits: FrameLimits): ParsedFrame {
  let clientId: string | undefined;
  if (value.clientId !== undefined) {
    if (typeof value.clientId !== 'string' || !CLIENT_ID.test(value.clientId)) {
      return fail('invalid_frame', 'clientId must be 1 to 64 letters, digits, "_" or "-".');
    }
    clientId = value.clientId;
  }
  if (typeof value.text !== 'string')
    return fail('invalid_frame', 'A message needs a string "text".', clientId);
  const text = value.text.replace(/\r\n?/g, '\n').trim();
  if (text.length === 0) return fail('invalid_frame', 'A message cannot be empty.', clientId);
  if (text.length > limits.maxMessageChars) {
    return fail(
      'too_long',
      `The message has ${text.length} characters; the limit is ${limits.maxMessageChars}. Shorten it or split it.`,
      clientId,
    );
  }
  return {
    ok: true,
    frame: clientId === undefined ? { type: 'message', text } : { type: 'message', text, clientId },
  };
}

/** Collapses whitespace and drops control characters from a display name. */
function cleanName(name: string): string {
  const printable = [...name].filter((c) => c.charCodeAt(0) >= 0x20 && c !== '\u007f').join('');
  return printable.replace(/\s+/g, ' ').trim();
}

function fail(code: ErrorFrameCode, message: string, clientId?: string): ParsedFrame {
  return clientId === undefined ? { ok: false, code, message } : { ok: false, code, message, clientId };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
