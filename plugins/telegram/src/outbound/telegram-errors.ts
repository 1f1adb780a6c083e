import { ColloquyError, type ErrorCode } from '@colloquy/core';
import { GrammyError, HttpError } from 'grammy';

/**
 * Wraps a grammY failure as a `ColloquyError` whose message says what to do. Bot tokens never
 * appear in it (grammY's messages name the method, not the URL).
 *
 * @param error - what the Bot API call threw
 * @param action - what was being done, e.g. `send a message to chat -100123`
 * @param details - extra structured context
 * @returns `RATE_LIMITED` for 429, `FORBIDDEN` for 403, `UNAUTHORIZED` for 401, `CONFLICT` for 409,
 *   `CHANNEL_ERROR` otherwise; `details.retryable` is true when Telegram answered 5xx or 429 or
 *   could not be reached (the send may succeed later), false for its other refusals
 */
export function toChannelError(
  error: unknown,
  action: string,
  details: Record<string, unknown> = {},
): ColloquyError {
  if (error instanceof GrammyError) {
    const code = errorCodeFor(error.error_code);
    const retryAfter = error.parameters.retry_after;
    return new ColloquyError(
      code,
      `Telegram refused to ${action}: ${error.description} (${error.error_code}).${hintFor(error)}`,
      {
        ...details,
        method: error.method,
        telegramErrorCode: error.error_code,
        description: error.description,
        // Telegram is down or busy for now; "chat not found", "bot was blocked" are final.
        retryable: error.error_code >= 500 || error.error_code === 429,
        ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
      },
      { cause: error },
    );
  }
  if (error instanceof HttpError) {
    return new ColloquyError(
      'CHANNEL_ERROR',
      `Could not reach the Telegram Bot API to ${action}: ${String((error.error as Error)?.message ?? error.error)}. Check the network or the account's apiRoot.`,
      { ...details, retryable: true },
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ColloquyError('CHANNEL_ERROR', `Failed to ${action}: ${message}`, details, { cause: error });
}

/** True for the 400 Telegram answers when HTML does not parse. */
export function isEntityParseError(error: unknown): boolean {
  return (
    error instanceof GrammyError &&
    error.error_code === 400 &&
    /can't parse entities/i.test(error.description)
  );
}

/** The new chat id when a group was upgraded to a supergroup. */
export function migratedChatId(error: unknown): number | undefined {
  return error instanceof GrammyError ? error.parameters.migrate_to_chat_id : undefined;
}

function errorCodeFor(status: number): ErrorCode {
  if (status === 429) return 'RATE_LIMITED';
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 409) return 'CONFLICT';
  return 'CHANNEL_ERROR';
}

function hintFor(error: GrammyError): string {
  if (error.error_code === 401) return ' The bot token is wrong or revoked; get a new one from @BotFather.';
  if (error.error_code === 403) return ' The bot was blocked, removed from the chat, or lacks the right.';
  if (error.error_code === 429) return ' Telegram rate-limited the bot; the send can be retried later.';
  if (/not a forum/i.test(error.description)) {
    return ' Enable Topics in the group settings and give the bot the "Manage topics" admin right.';
  }
  if (/thread not found/i.test(error.description)) return ' The forum topic was deleted or closed.';
  return '';
}
