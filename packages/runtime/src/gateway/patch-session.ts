import { ColloquyError, type SessionRecord } from '@colloquy/core';
import type { SessionsPatchFields } from '@colloquy/core/gateway';
import type { SessionPatch } from '@colloquy/core/store';
import { lookupModel } from '../agent/model-selection.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';

/** Thinking levels `sessions.patch` accepts. */
export const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high'] as const;
/** Verbose levels `sessions.patch` accepts. */
export const VERBOSE_LEVELS = ['off', 'on', 'full'] as const;

const FIELDS: readonly (keyof SessionsPatchFields)[] = [
  'label',
  'displayName',
  'model',
  'thinkingLevel',
  'verboseLevel',
  'sendPolicy',
];

/** The longest label accepted. */
export const MAX_LABEL_LENGTH = 64;

/**
 * Checks a `sessions.patch` request and turns it into a store patch.
 *
 * - `label`: 1..64 characters, unique among the agent's sessions;
 * - `displayName`: up to 200 characters;
 * - `model`: `provider/model` that the runtime's model resolver knows;
 * - `thinkingLevel`: off | minimal | low | medium | high; `verboseLevel`: off | on | full;
 * - `sendPolicy`: allow | deny, or `inherit` / null to clear.
 * `null` clears a field; unknown fields are refused.
 *
 * @param ctx - the runtime internals (store, config, model resolver)
 * @param session - the session being patched
 * @param raw - the patch as received
 * @returns the store patch
 * @throws `INVALID_ARGUMENT` naming the field; `CONFLICT` for a label already in use
 */
export async function validateSessionPatch(
  ctx: RuntimeContext,
  session: SessionRecord,
  raw: unknown,
): Promise<SessionPatch> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw invalid('patch', 'an object of fields to change');
  }
  const input = raw as Record<string, unknown>;
  const patch: SessionPatch = {};
  for (const field of Object.keys(input)) {
    if (!FIELDS.includes(field as keyof SessionsPatchFields)) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `sessions.patch: "${field}" cannot be patched. Patchable fields: ${FIELDS.join(', ')}.`,
        { field },
      );
    }
  }
  if (Object.keys(input).length === 0) throw invalid('patch', `at least one of ${FIELDS.join(', ')}`);

  if ('label' in input) {
    const label = nullableString(input.label, 'label', MAX_LABEL_LENGTH);
    if (label !== null) {
      const labelled = await ctx.store.listSessions({
        label,
        agentIds: [session.agentId],
        includeArchived: true,
      });
      const taken = labelled.find((other) => other.key !== session.key);
      if (taken) {
        throw new ColloquyError(
          'CONFLICT',
          `The label "${label}" is already used by ${taken.key}. Choose another label, or clear that one first.`,
          { label, key: taken.key },
        );
      }
    }
    patch.label = label;
  }
  if ('displayName' in input) patch.displayName = nullableString(input.displayName, 'displayName', 200);
  if ('model' in input) {
    const model = nullableString(input.model, 'model', 200);
    if (model !== null) {
      if (!/^[^/\s]+\/\S+$/.test(model))
        throw invalid('model', 'a "provider/model" reference, e.g. "openai/gpt-4o-mini"');
      let known = false;
      try {
        known = lookupModel(ctx.models, model) !== undefined;
      } catch {
        known = false;
      }
      if (!known) {
        throw new ColloquyError(
          'INVALID_ARGUMENT',
          `sessions.patch: the model "${model}" is not available. Configure its provider under models.providers.`,
          { field: 'model', model },
        );
      }
    }
    patch.model = model;
  }
  if ('thinkingLevel' in input)
    patch.thinkingLevel = nullableEnum(input.thinkingLevel, 'thinkingLevel', THINKING_LEVELS);
  if ('verboseLevel' in input)
    patch.verboseLevel = nullableEnum(input.verboseLevel, 'verboseLevel', VERBOSE_LEVELS);
  if ('sendPolicy' in input) {
    const value = input.sendPolicy === 'inherit' ? null : input.sendPolicy;
    patch.sendPolicy = nullableEnum(value, 'sendPolicy', ['allow', 'deny'] as const);
  }
  return patch;
}

function nullableString(value: unknown, field: string, maxLength: number): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || value.trim() === '' || value.trim().length > maxLength) {
    throw invalid(field, `a non-empty string of at most ${maxLength} characters, or null to clear`);
  }
  return value.trim();
}

function nullableEnum<T extends string>(value: unknown, field: string, allowed: readonly T[]): T | null {
  if (value === null) return null;
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw invalid(field, `one of ${allowed.join(', ')}, or null to clear`);
  }
  return value as T;
}

function invalid(field: string, expected: string): ColloquyError {
  return new ColloquyError('INVALID_ARGUMENT', `sessions.patch: "${field}" must be ${expected}.`, { field });
}
