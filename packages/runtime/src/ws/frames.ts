import { ColloquyError, type ErrorCode } from '@colloquy/core';
import type { GatewayEvent } from '@colloquy/core/gateway';
import { toColloquyError } from '@colloquy/core/internal';

/** A request id chosen by the client; echoed in the response. */
export type FrameId = string | number;

/** A client request: a gateway method, or one of the control methods `auth`, `subscribe`, `unsubscribe`. */
export interface RequestFrame {
  /** Echoed in the response. */
  id: FrameId;
  /** A gateway method name, or `auth`, `subscribe`, `unsubscribe`. */
  method: string;
  /** The method's parameters (`{}` for none). */
  params: Record<string, unknown>;
}

/** The error body of a failed response (a `ColloquyError` as JSON). */
export interface ErrorBody {
  /** The error's stable code. */
  code: ErrorCode;
  /** What went wrong and what to do about it. */
  message: string;
  /** JSON-serialisable facts about the failure. */
  details: Record<string, unknown>;
}

/** A server response to a request. `id` is `null` when the request could not be read. */
export type ResponseFrame =
  | { id: FrameId; ok: true; result: unknown }
  | { id: FrameId | null; ok: false; error: ErrorBody };

/** A server-pushed event (only after `subscribe`). */
export interface EventFrame {
  /** The gateway event. */
  event: GatewayEvent;
}

/** Close codes the server uses, besides the WebSocket standard ones (1001 going away, 1009 too big). */
export const CLOSE_CODES = {
  /** Missing or wrong token. Do not reconnect with the same token. */
  unauthorized: 4401,
  /** No `auth` frame arrived in time. */
  authTimeout: 4408,
} as const;

/** The result of {@link parseRequestFrame}. */
export type ParsedFrame =
  | { ok: true; frame: RequestFrame }
  | { ok: false; id: FrameId | null; error: ColloquyError };

/**
 * Parses and checks one text frame from a client.
 *
 * @param text - the raw frame
 * @returns the request, or an `INVALID_ARGUMENT` error to answer with (and the id, when readable)
 */
export function parseRequestFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid(null, 'The frame is not valid JSON. Send {"id":1,"method":"sessions.list","params":{}}.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid(null, 'The frame must be a JSON object {"id","method","params"}.');
  }
  const record = value as Record<string, unknown>;
  const id = record.id;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id))) {
    return invalid(null, 'The frame needs an "id" (a string or a number) to match the response to.');
  }
  if (typeof record.method !== 'string' || record.method.length === 0) {
    return invalid(id, 'The frame needs a "method" string, e.g. "sessions.list".');
  }
  const params = record.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    return invalid(id, `"params" of ${record.method} must be a JSON object.`);
  }
  return { ok: true, frame: { id, method: record.method, params: params as Record<string, unknown> } };
}

function invalid(id: FrameId | null, message: string): ParsedFrame {
  return { ok: false, id, error: new ColloquyError('INVALID_ARGUMENT', message) };
}

/**
 * Turns any thrown value into the error body of a response frame.
 *
 * @param error - what the method threw
 * @returns `{ code, message, details }`
 */
export function toErrorBody(error: unknown): ErrorBody {
  const e = toColloquyError(error);
  return { code: e.code, message: e.message, details: e.details };
}

/**
 * Rebuilds a `ColloquyError` from a response's error body (client side).
 *
 * @param body - the `error` of a failed response
 * @returns a `ColloquyError` with the same code, message and details
 */
export function fromErrorBody(body: unknown): ColloquyError {
  if (typeof body === 'object' && body !== null) {
    const b = body as Partial<ErrorBody>;
    if (typeof b.code === 'string' && typeof b.message === 'string') {
      return new ColloquyError(b.code, b.message, isRecord(b.details) ? b.details : {});
    }
  }
  return new ColloquyError('INTERNAL', 'The gateway answered with an unreadable error.', { body });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
