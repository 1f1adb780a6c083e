// @colloquy/runtime: makes Colloquy sessions run.

export { type AgentLoopInput, type AgentLoopResult, runAgentLoop } from './agent/agent-loop.js';
export {
  buildSystemPrompt,
  DEFAULT_SYSTEM_PROMPT,
  estimateTokens,
  loadHistory,
  toModelMessages,
} from './agent/build-prompt.js';
export { type ModelSelection, modelRefFor, selectModel } from './agent/model-selection.js';
export { runToolCall, type ToolCallOutcome, toolSpecs } from './agent/tool-runner.js';
// --- several instances on one database (implemented by @colloquy/cluster) ---
export type {
  ClusterAdapter,
  ClusterEvent,
  ClusterHandlers,
  LaneLimits,
} from './cluster/cluster-adapter.js';
export { createDeliver, type Deliver, type DeliveryKind, type DeliveryRequest } from './delivery/deliver.js';
export { startTyping, type TypingOptions } from './delivery/typing.js';
export { GATEWAY_METHODS, isGatewayMethod } from './gateway/method-names.js';
export type { RuntimeGateway } from './gateway/runtime-gateway.js';
export type { InboundOutcome } from './inbound/receive-inbound.js';
// --- model providers (AI SDK) ---
export * from './providers/index.js';
// --- advanced: the building blocks ---
export {
  type AbortFound,
  type CommandQueue,
  type CommandQueueOptions,
  createCommandQueue,
  type QueueItem,
  type QueueStats,
} from './queue/command-queue.js';
export { type StopKind, stopKindOf, stopReason } from './queue/stop-reason.js';
// --- the runtime ---
export {
  createRuntime,
  type Runtime,
  type RuntimeState,
  type ShutdownOptions,
} from './runtime/create-runtime.js';
export type { RecoveryReport } from './runtime/recover-runs.js';
export type {
  Clock,
  CommandsHook,
  ModelResolver,
  ModelRouterLike,
  ResolvedModel,
  RuntimeOptions,
  ToolsHook,
  ToolsHookContext,
} from './runtime/runtime-options.js';
export { sessionToolsHook } from './runtime/session-tools-hook.js';
export { installSignalHandlers, type SignalHandlerOptions } from './runtime/signal-handlers.js';
export type { AfterCommit, TurnEndHook } from './runtime/turn-end-hook-types.js';
// --- sub-agents: announce outbox, attachments, cleanup ---
export type { AnnouncePayload, AnnounceStats, AnnounceStatus, ChatOutcome } from './subagents/announce.js';
export {
  removeAttachments,
  type WrittenAttachments,
  writeAttachments,
} from './subagents/attachment-files.js';
export type { SubagentRegistry, SubagentRuntimeOptions, SweepReport } from './subagents/subagent-registry.js';
export { defaultWorkspaceRoot, sessionWorkspaceDir } from './subagents/workspace.js';
export {
  CLOSE_CODES,
  type ErrorBody,
  type EventFrame,
  type RequestFrame,
  type ResponseFrame,
} from './ws/frames.js';
export {
  createGatewayClient,
  type GatewayClient,
  type GatewayClientOptions,
  type GatewayClientState,
  type ReconnectOptions,
} from './ws/gateway-client.js';
// --- the gateway over WebSocket ---
export {
  type GatewayServer,
  type GatewayServerOptions,
  startGatewayServer,
} from './ws/gateway-server.js';
