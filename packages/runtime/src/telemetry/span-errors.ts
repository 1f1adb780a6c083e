import { isColloquyError } from '@colloquy/core';
import { type Span, SpanStatusCode } from '@opentelemetry/api';

/**
 * Marks a span failed: status `ERROR` with the error's message, and `error.type` (a
 * `ColloquyError`'s code, else the error's class name).
 *
 * @param span - the span
 * @param error - what failed: an error, or a short type when there is no error object
 * @param message - the status message when `error` is a type
 */
export function failSpan(span: Span, error: unknown, message?: string): void {
  if (!span.isRecording()) return;
  const type = typeof error === 'string' ? error : errorTypeOf(error);
  const text = message ?? (error instanceof Error ? error.message : undefined);
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(text ? { message: text } : {}) });
}

/**
 * The `error.type` of an error: a `ColloquyError`'s code, else the error's class name, else `_OTHER`.
 *
 * @param error - what was thrown
 * @returns the type
 */
export function errorTypeOf(error: unknown): string {
  if (isColloquyError(error)) return error.code;
  return error instanceof Error ? error.name : '_OTHER';
}
