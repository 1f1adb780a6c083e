// @colloquy/runtime: makes Colloquy sessions run.

export { type ModelSelection, selectModel } from './agent/model-selection.js';
// --- several instances on one database (implemented by @colloquy/cluster) ---
export type {
  ClusterAdapter,
  ClusterEvent,
  ClusterHandlers,
  LaneLimits,
} from './cluster/cluster-adapter.js';
// --- the runtime ---
export type { Deliver, DeliveryKind, DeliveryRequest } from './delivery/deliver.js';
export type { OutboxStats } from './delivery/delivery-outbox.js';
export { GATEWAY_METHODS, isGatewayMethod } from './gateway/method-names.js';
export type { RuntimeGateway } from './gateway/runtime-gateway.js';
export type { InboundOutcome } from './inbound/receive-inbound.js';
// --- MCP tools for the agents ---
export {
  createMcpToolSource,
  MCP_SERVER_NAME_PATTERN,
  type McpHttpServerConfig,
  type McpServerConfig,
  type McpServerState,
  type McpServerStatus,
  type McpStdioServerConfig,
  type McpToolSet,
  type McpToolSource,
  type McpToolSourceOptions,
} from './mcp/client/index.js';
// --- sub-agent progress in the requester's chat ---
export type { ChatProgressOptions } from './progress/chat-progress.js';
// --- model providers (AI SDK) ---
export * from './providers/index.js';
export type { QueueStats } from './queue/command-queue.js';
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
export type { AnnounceStats, AnnounceStatus, ChatOutcome } from './subagents/announce.js';
export type { SubagentRegistry, SubagentRuntimeOptions, SweepReport } from './subagents/subagent-registry.js';
// --- OpenTelemetry (spans and metrics through @opentelemetry/api) ---
export {
  type BatchTracerProvider,
  type BatchTracerProviderOptions,
  createBatchTracerProvider,
  type SpanBatchExporter,
} from './telemetry/batch-tracer/batch-tracer-provider.js';
export type {
  ExportedSpan,
  SpanEvent,
  SpanResource,
  SpanScope,
} from './telemetry/batch-tracer/recorded-span.js';
export { INSTRUMENTATION_NAME, type RuntimeTelemetryOptions } from './telemetry/telemetry.js';
export {
  CLOSE_CODES,
  type ErrorBody,
  type EventFrame,
  type FrameId,
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
