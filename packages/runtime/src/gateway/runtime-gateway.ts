import type { Gateway, GatewayEvent } from '@colloquy/core';

/** The in-process gateway: the {@link @colloquy/core#Gateway} surface with events always available. */
export interface RuntimeGateway extends Gateway {
  /** Subscribes to gateway events; returns the unsubscribe function. */
  subscribe(listener: (event: GatewayEvent) => void): () => void;
}
