import { describe, expect, it } from 'vitest';
import { estimateTokens } from './token-estimate.js';

// Counts measured once with gpt-tokenizer 4.0.0 (o200k_base, cl100k_base); the estimate must stay within
// 35 % of each, where characters / 4 is off by up to 75 % (CJK, numbers).
const SAMPLES: { name: string; text: string; o200k: number; cl100k: number }[] = [
  {
    name: 'English prose',
    text: 'The quick brown fox jumps over the lazy dog. Colloquy lets AI agents in chat apps see, read, message and spawn each other. When a sub-agent finishes, its result is announced to the requester exactly once, even across a crash and a restart of the process.',
    o200k: 57,
    cl100k: 57,
  },
  {
    name: 'TypeScript',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the sample is source code holding a template literal.
    text: 'export function estimateTokens(text: string): number {\n  let tokens = 0;\n  for (let i = 0; i < text.length; i++) {\n    const code = text.charCodeAt(i);\n    if (code < 0x80) tokens += ASCII_WEIGHT[code] ?? 1;\n    else tokens += 1;\n  }\n  return Math.ceil(tokens);\n}\n\nconst config = { gateway: { port: 0 }, channels: { webchat: { port: 0 } } };\nawait store.transaction(async (tx) => tx.putInbox({ sessionKey, id: `announce:${child}:${runId}` }));',
    o200k: 134,
    cl100k: 132,
  },
  {
    name: 'Chinese',
    text: '子代理完成后，其结果会准确地通知请求者一次，即使进程崩溃并重新启动也是如此。我们在聊天应用中让人工智能代理彼此看到、阅读、发送消息并相互生成。',
    o200k: 49,
    cl100k: 73,
  },
  {
    name: 'Japanese',
    text: 'サブエージェントが終了すると、その結果はプロセスがクラッシュして再起動した後でも、要求者に一度だけ通知されます。チャットアプリのAIエージェントが互いに会話できます。',
    o200k: 54,
    cl100k: 72,
  },
  {
    name: 'Korean',
    text: '하위 에이전트가 끝나면 그 결과는 프로세스가 충돌하고 다시 시작된 후에도 요청자에게 정확히 한 번 알려집니다.',
    o200k: 36,
    cl100k: 55,
  },
  {
    name: 'Russian',
    text: 'Когда подагент завершает работу, его результат сообщается запрашивающему ровно один раз, даже после сбоя и перезапуска процесса.',
    o200k: 32,
    cl100k: 51,
  },
  {
    name: 'numbers',
    text: '2026-11-24T22:17:57Z 1234567890 3.14159265 0xDEADBEEF 42 7 1000000 99.95% 127.0.0.1:8080',
    o200k: 54,
    cl100k: 54,
  },
];

describe('estimateTokens', () => {
  it.each(SAMPLES)('is within 35 % of both tokenizers for $name', ({ text, o200k, cl100k }) => {
    const estimate = estimateTokens(text);
    for (const actual of [o200k, cl100k]) {
      expect(Math.abs(estimate - actual) / actual).toBeLessThanOrEqual(0.35);
    }
  });

  it('is closer than characters / 4 on code and CJK, within 15 % of the two counts on average', () => {
    let errors = 0;
    for (const { name, text, o200k, cl100k } of SAMPLES) {
      const mean = (o200k + cl100k) / 2;
      const error = Math.abs(estimateTokens(text) - mean) / mean;
      errors += error;
      if (name !== 'English prose') {
        expect(error, name).toBeLessThan(Math.abs(Math.ceil(text.length / 4) - mean) / mean);
      }
    }
    expect(errors / SAMPLES.length).toBeLessThan(0.15);
  });

  it('counts nothing for an empty text and something for every non-empty one', () => {
    expect(estimateTokens('')).toBe(0);
    for (const text of ['a', '1', ' ', '\n', '.', '中', '한', 'é', '😀'])
      expect(estimateTokens(text)).toBeGreaterThan(0);
  });
});
