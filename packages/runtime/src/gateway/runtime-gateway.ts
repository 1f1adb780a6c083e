import type { Gateway, GatewayEvent } from '@colloquy/core';

/** The in-process gateway: the {@link Gateway} surface with events always available. */
export interface RuntimeGateway extends Gateway {
  subscribe(listener: (event: GatewayEvent) => void): () => void;
}
