import type { GatewayMethod } from '@colloquy/core/gateway';

const METHODS = {
  'sessions.list': true,
  'sessions.resolve': true,
  'sessions.patch': true,
  'sessions.delete': true,
  'sessions.search': true,
  'sessions.tree': true,
  'chat.history': true,
  'chat.send': true,
  agent: true,
  'agent.wait': true,
  'agent.abort': true,
  'agent.recordAnnounce': true,
  'agents.list': true,
  'session.status': true,
  'session.yield': true,
  'mcp.open': true,
  'mcp.events': true,
  'mcp.pending': true,
} as const satisfies Record<GatewayMethod, true>;

/** Every gateway method name, in the order of the `GatewayMethods` interface. */
export const GATEWAY_METHODS: readonly GatewayMethod[] = Object.keys(METHODS) as GatewayMethod[];

/**
 * True when `name` is a gateway method.
 *
 * @param name - any string, e.g. from a WebSocket frame
 * @returns whether the gateway serves it
 */
export function isGatewayMethod(name: string): name is GatewayMethod {
  return Object.hasOwn(METHODS, name);
}

/**
 * Methods that are safe to send again after a lost connection: they read, or (like `agent.wait`)
 * only wait, or set a value (`agent.recordAnnounce`). `agent` is safe too when it carries an `idempotencyKey` (checked by the caller).
 */
export const RETRYABLE_METHODS: ReadonlySet<GatewayMethod> = new Set<GatewayMethod>([
  'sessions.list',
  'sessions.resolve',
  'sessions.search',
  'sessions.tree',
  'chat.history',
  'agent.wait',
  'agent.recordAnnounce',
  'agents.list',
  'session.status',
  'mcp.pending',
]);
