import { isColloquyError } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { parseModelRef, resolveModelRef, stripProviderPrefix } from './model-ref.js';

const config = {
  models: { providers: { local: { kind: 'openai-compatible' as const, baseURL: 'http://127.0.0.1:1/v1' } } },
};

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isColloquyError(error) ? error.code : 'not-a-colloquy-error';
  }
  return undefined;
}

describe('model references', () => {
  it('splits at the first slash so model ids may contain slashes', async () => {
    expect(parseModelRef('openrouter/anthropic/claude-sonnet-4')).toEqual({
      providerId: 'openrouter',
      modelId: 'anthropic/claude-sonnet-4',
    });
  });

  it.each(['gpt-4o', '/gpt-4o', 'local/', ''])('rejects the malformed reference %j', (ref) => {
    expect(codeOf(() => parseModelRef(ref))).toBe('INVALID_ARGUMENT');
  });

  it('resolves a configured provider and names the known ones for an unknown provider', async () => {
    expect(resolveModelRef(config, 'local/llama3.2')).toEqual({
      providerId: 'local',
      modelId: 'llama3.2',
      provider: config.models.providers.local,
    });
    try {
      resolveModelRef(config, 'openai/gpt-4o');
      expect.unreachable();
    } catch (error) {
      expect(isColloquyError(error) && error.details).toMatchObject({
        providerId: 'openai',
        known: ['local'],
      });
      expect((error as Error).message).toContain('models.providers');
    }
  });

  it('strips only the provider own prefix', async () => {
    expect(stripProviderPrefix('local', 'local/m')).toBe('m');
    expect(stripProviderPrefix('local', 'vendor/m')).toBe('vendor/m');
    expect(stripProviderPrefix('local', 'm')).toBe('m');
  });
});
