import { ColloquyError } from '@colloquy/core';
import type { GatewayMethod, GatewayParams, GatewayResult } from '@colloquy/core/gateway';
import { toColloquyError } from '@colloquy/core/internal';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { sessionYield } from '../runtime/yield-wake.js';
import {
  agentAbort,
  agentRecordAnnounce,
  agentRun,
  agentWait,
  createAgentMethodsState,
} from './agent-methods.js';
import { chatHistory, chatSend } from './chat-methods.js';
import { agentsList, sessionStatus } from './info-methods.js';
import { mcpEvents, mcpOpen, mcpPending } from './mcp-methods.js';
import { isGatewayMethod } from './method-names.js';
import type { RuntimeGateway } from './runtime-gateway.js';
import { sessionsSearch } from './search-methods.js';
import { sessionsDelete, sessionsList, sessionsPatch, sessionsResolve } from './sessions-methods.js';
import { sessionsTree } from './tree-methods.js';

type Handler = (params: unknown) => unknown;

/**
 * Builds the in-process gateway over the runtime internals. Every method validates its params
 * (they may come from a WebSocket frame) and rejects with a `ColloquyError`; store failures are
 * also logged, because the session tools pass only their code on to the model.
 *
 * @param ctx - the runtime internals
 * @returns the gateway
 */
export function createInProcessGateway(ctx: RuntimeContext): RuntimeGateway {
  const agentState = createAgentMethodsState();
  const handlers: Record<GatewayMethod, Handler> = {
    'sessions.list': (p) => sessionsList(ctx, p),
    'sessions.resolve': (p) => sessionsResolve(ctx, p),
    'sessions.patch': (p) => sessionsPatch(ctx, p),
    'sessions.delete': (p) => sessionsDelete(ctx, p),
    'sessions.search': (p) => sessionsSearch(ctx, p),
    'sessions.tree': (p) => sessionsTree(ctx, p),
    'chat.history': (p) => chatHistory(ctx, p),
    'chat.send': (p) => chatSend(ctx, p),
    agent: (p) => agentRun(ctx, agentState, p),
    'agent.wait': (p) => agentWait(ctx, p),
    'agent.abort': (p) => agentAbort(ctx, p),
    'agent.recordAnnounce': (p) => agentRecordAnnounce(ctx, p),
    'agents.list': (p) => agentsList(ctx, p),
    'session.status': (p) => sessionStatus(ctx, p),
    'session.yield': (p) => sessionYield(ctx, p),
    'mcp.open': (p) => mcpOpen(ctx, p),
    'mcp.events': (p) => mcpEvents(ctx, p),
    'mcp.pending': (p) => mcpPending(ctx, p),
  };
  return {
    async call<M extends GatewayMethod>(method: M, params: GatewayParams<M>): Promise<GatewayResult<M>> {
      if (!isGatewayMethod(method)) {
        throw new ColloquyError('NOT_SUPPORTED', `Unknown gateway method "${String(method)}".`, { method });
      }
      try {
        return (await handlers[method](params)) as GatewayResult<M>;
      } catch (error) {
        const failure = toColloquyError(error);
        // Session tools tell the model only that the store failed; the details are the owner's.
        if (failure.code.startsWith('STORE_')) {
          ctx.log.warn({ err: failure, method }, 'a gateway call failed in the store');
        }
        throw failure;
      }
    },
    subscribe: (listener) => ctx.events.subscribe(listener),
  };
}
