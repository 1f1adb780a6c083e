import type { Gateway } from '@colloquy/core';
import type { GatewayEvent } from '@colloquy/core/gateway';

/** The in-process gateway: the {@link @colloquy/core#Gateway} surface with events always available. */
export interface RuntimeGateway extends Gateway {
  /** Subscribes to gateway events; returns the unsubscribe function. */
  subscribe(listener: (event: GatewayEvent) => void): () => void;
}
