import type { Logger } from '@colloquy/core';
import type { ModelPrice, ModelProviderConfig } from '@colloquy/core/model';

export type { ModelPrice, ModelProviderConfig };

/** The part of a Colloquy config the provider helpers read (a full `ColloquyConfig` fits). */
export interface ModelsConfigView {
  /** The `models` section of a Colloquy config: provider entries and prices. */
  models: {
    providers: Readonly<Record<string, ModelProviderConfig>>;
    prices?: Readonly<Record<string, ModelPrice>>;
  };
}

/** Retry behaviour of a provider. Retries never happen after output started streaming. */
export interface ModelRetryOptions {
  /** Retries after a 5xx, 408, a network error or a 429 (so at most `maxRetries + 1` attempts). Default 2. */
  maxRetries?: number;
  /**
   * First backoff delay for 5xx and network errors, doubled each retry, up to `maxRetryAfterMs`, less
   * up to 20 % at random. Default 500 ms. The AI SDK's own retry is off: this is the one retry layer.
   */
  baseDelayMs?: number;
  /**
   * The longest `retry-after` a 429 may ask for and still be retried here. A longer wait is thrown as
   * `RATE_LIMITED` with `details.retryAfterMs` for the caller to schedule. Default 20000 ms.
   */
  maxRetryAfterMs?: number;
}

/** Options of `createModelProvider` and `createModelRouter`. */
export interface ModelProviderOptions {
  /**
   * Give up when the provider sends nothing (no headers, no stream part) for this long; the turn fails
   * with `TIMEOUT`. Default 120000 ms.
   */
  idleTimeoutMs?: number;
  /** Retry behaviour; see {@link ModelRetryOptions}. */
  retry?: ModelRetryOptions;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
  /** The environment used for `apiKeyEnv` and the Anthropic default `ANTHROPIC_API_KEY`. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * A `fetch` implementation (tests, proxies) that every request goes through. Default: `node:http(s)`
   * for `openai-compatible`, the global `fetch` for `anthropic`.
   */
  fetch?: typeof globalThis.fetch;
  /** Receives retry and failure logs. Default silent. */
  logger?: Logger;
}
