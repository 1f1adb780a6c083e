import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createAppLogger } from './create-logger.js';

function sink(isTTY = false) {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean };
  stream.isTTY = isTTY;
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { stream, text: () => text };
}

describe('createAppLogger', () => {
  it('writes JSON lines when the output is not a terminal, and masks secrets added later', async () => {
    const out = sink();
    const secrets: string[] = ['sk-known-secret'];
    const log = await createAppLogger({ destination: out.stream, secrets });
    secrets.push('generated-token-xyz');
    log.info({ key: 'sk-known-secret' }, 'using generated-token-xyz');
    await new Promise((resolve) => setImmediate(resolve));
    const line = JSON.parse(out.text().trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, key: '[redacted]', msg: 'using [redacted]' });
    expect(out.text()).not.toContain('secret');
  });

  it('writes readable lines when asked for pretty output', async () => {
    const out = sink();
    const log = await createAppLogger({ destination: out.stream, format: 'pretty' });
    log.warn({ port: 7420 }, 'port busy');
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.text()).toMatch(/WARN.*port busy/);
    expect(out.text()).toContain('{"port":7420}');
    expect(() => JSON.parse(out.text())).toThrow();
  });
});
