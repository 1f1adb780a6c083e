import type { Logger } from '@colloquy/core';
import { silentLogger } from '@colloquy/core';
import type { GatewayEvent } from '@colloquy/core/gateway';

/** A synchronous fan-out of gateway events to in-process listeners. */
export interface EventBus {
  /** Delivers the event to every listener; a throwing listener is logged and skipped. */
  emit(event: GatewayEvent): void;
  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: (event: GatewayEvent) => void): () => void;
  /** True when anyone listens (lets hot paths skip building events). */
  hasListeners(): boolean;
}

/**
 * Creates the event bus behind `Gateway.subscribe`.
 *
 * @param logger - where listener failures are logged
 * @returns the bus
 */
export function createEventBus(logger: Logger = silentLogger): EventBus {
  const listeners = new Set<(event: GatewayEvent) => void>();
  return {
    emit(event) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (error) {
          logger.warn({ err: error, type: event.type }, 'gateway event listener threw');
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    hasListeners: () => listeners.size > 0,
  };
}
