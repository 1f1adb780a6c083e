import { resolveConfig } from '@colloquy/core';
import { MemoryStore, type Store } from '@colloquy/core/store';
import {
  type ChatProgressOptions,
  createModelRouter,
  createRuntime,
  type Runtime,
  type ToolsHook,
} from '@colloquy/runtime';
import { createScriptedModel, lastUserText, type ScriptedReply, type ScriptFn } from '@colloquy/testkit';
import { createWebChatPlugin, type WebChatConfigInput, type WebChatPlugin } from '../../src/index.js';
import { ADMIN_TOKEN, COOKIE_SECRET } from './start.js';

/** How the scripted model answers the last user message. */
export type Answer = (userText: string) => ScriptedReply;

/** Streams a text word by word, as a real model would. */
export function streamed(text: string, chunkDelayMs = 15): ScriptedReply {
  return { text: text.match(/\S+\s*|\s+/g) ?? [text], chunkDelayMs };
}

/** A real runtime (MemoryStore, scripted model) with the web chat as its only channel. */
export interface RuntimeHost {
  runtime: Runtime;
  plugin: WebChatPlugin;
  store: Store;
  base: string;
  stop(): Promise<void>;
}

/** What else a host's runs get: a script that reads the whole request, and tools. */
export interface RuntimeHostExtras {
  /** Answers from the whole request instead of `answer` (e.g. to answer after a tool result). */
  script?: ScriptFn;
  /** Tools for every run. */
  tools?: ToolsHook;
  /** When the sub-agent progress line shows and how often it is edited. Default the runtime's. */
  progress?: ChatProgressOptions;
}

/**
 * Boots `createRuntime` with the scripted model as `scripted/test` and the web chat on a free port.
 * Pass `store` to simulate a restart over the same data.
 */
export async function startRuntimeHost(
  answer: Answer = (text) => streamed(`You said: ${text}`),
  webchat: WebChatConfigInput = {},
  store: Store = new MemoryStore(),
  extras: RuntimeHostExtras = {},
): Promise<RuntimeHost> {
  const model = createScriptedModel(extras.script ?? ((request) => answer(lastUserText(request) ?? '')));
  const config = resolveConfig({
    agents: { defaults: { model: 'scripted/test' } },
    runtime: { shutdownDrainMs: 500 },
  });
  const plugin = createWebChatPlugin({
    cookieSecret: COOKIE_SECRET,
    adminToken: ADMIN_TOKEN,
    config: { port: 0, ...webchat },
  });
  const runtime = createRuntime({
    config,
    store,
    plugins: [plugin],
    models: createModelRouter(config, { providers: { scripted: model } }),
    typingIntervalMs: 1000,
    ...(extras.tools ? { tools: extras.tools } : {}),
    ...(extras.progress ? { progress: extras.progress } : {}),
  });
  await runtime.start();
  return {
    runtime,
    plugin,
    store,
    base: plugin.address(),
    stop: () => runtime.shutdown(),
  };
}
