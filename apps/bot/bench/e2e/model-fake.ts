import { type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';

/** The id every bench message carries. */
const MESSAGE_ID = /msg-[A-Za-z0-9-]+/g;

/**
 * Starts the OpenAI-compatible fake answering `re: <id> <id> ...` with the ids of the user messages
 * after the last assistant message (the runtime folds messages that queued up behind a running turn
 * into the next turn, which answers them all), after `latencyMs` (the model's thinking time).
 */
export function startEchoModel(latencyMs: number): Promise<OpenAIFake> {
  return startOpenAIFake((request) => {
    const messages = (request.body?.messages ?? []) as { role: string; content: unknown }[];
    const ids: string[] = [];
    for (let i = messages.length - 1; i >= 0 && messages[i]!.role !== 'assistant'; i--) {
      const content = messages[i]!.content;
      if (messages[i]!.role !== 'user') continue;
      const text = typeof content === 'string' ? content : JSON.stringify(content ?? '');
      ids.unshift(...(text.match(MESSAGE_ID) ?? []));
    }
    return { text: `re: ${ids.join(' ') || 'nothing'}`, ...(latencyMs > 0 ? { delayMs: latencyMs } : {}) };
  });
}

/** The environment that points the app at the fake model. */
export function modelEnv(model: OpenAIFake): Record<string, string> {
  return { COLLOQUY_MODEL: 'fake/bench-model', OPENAI_BASE_URL: model.baseURL };
}

/** The ids a reply answers. */
export function repliedIds(text: string): string[] {
  return text.startsWith('re: ') ? (text.match(MESSAGE_ID) ?? []) : [];
}
