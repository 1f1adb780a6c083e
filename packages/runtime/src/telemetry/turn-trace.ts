import type { AgentTool } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import type { FinishReason, ModelMessage, TokenUsage } from '@colloquy/core/model';
import { type Attributes, type Context, SpanKind, type SpanOptions, trace } from '@opentelemetry/api';
import type { TurnOutcome } from '../agent/turn-outcome.js';
import { messageParts, outputParts } from './content-parts.js';
import { errorTypeOf, failSpan } from './span-errors.js';
import type { Telemetry } from './telemetry.js';
import { contextOfRun, parseTraceparent, withTreeId } from './trace-context.js';

/** The span of one model call (`chat <model>`). */
export interface ModelCallTrace {
  /** The first chunk of the answer arrived (time to first chunk). */
  firstChunk(): void;
  /** The call ended: its answer, or the error that ended it. */
  end(result: ModelCallResult | undefined, error?: unknown): void;
}

/** What a model call produced, for its span. */
export interface ModelCallResult {
  text: string;
  calls: readonly { id: string; name: string; arguments: unknown }[];
  usage: TokenUsage;
  finishReason?: FinishReason;
}

/** The tracing hooks of the agent loop: a span per model call and per tool call. */
export interface LoopTrace {
  /** Starts the span of one model call. */
  modelCall(request: {
    provider: string;
    model: string;
    system: string;
    messages: readonly ModelMessage[];
  }): ModelCallTrace;
  /** Runs one tool call in its span (the active context, so a spawn inherits it). */
  toolCall<T extends { text: string; isError: boolean }>(
    call: { id: string; name: string; arguments: unknown },
    run: () => Promise<T>,
  ): Promise<T>;
}

/** The `invoke_agent` span of one turn and the hooks that add its children. */
export interface TurnTrace extends LoopTrace {
  /** The turn's context: its span active, with the spawn tree id. */
  readonly context: Context;
  /** Tools of the turn that come from MCP servers (counted in `colloquy.mcp.calls`). */
  useMcpTools(tools: readonly AgentTool[]): void;
  /** Records how the turn ended. */
  outcome(outcome: TurnOutcome): void;
  /** Ends the span. */
  end(): void;
}

/** The MCP tools of a turn that has none. */
const NO_TOOLS: ReadonlySet<string> = new Set();

/**
 * Starts the `invoke_agent <agent>` span of a turn, under the trace context its leader run stores
 * (`meta.traceparent`: the span that queued it, maybe in another process or before a restart), or
 * in a trace of its own linked to it when `traceTree` is `run`. Records each run's queue wait.
 *
 * @param telemetry - the runtime's telemetry
 * @param session - the session's key and agent
 * @param runs - the turn's runs, leader first
 * @returns the turn's trace
 */
export function startTurnTrace(
  telemetry: Telemetry,
  session: { key: string; agentId?: string | undefined; kind?: string | undefined },
  runs: readonly RunRecord[],
): TurnTrace {
  const { tracer, metrics } = telemetry;
  const leader = runs[0]!;
  for (const run of runs) {
    const waited = (run.startedAt ?? run.createdAt) - run.createdAt;
    metrics.queueWait.record(Math.max(0, waited) / 1000, { 'colloquy.lane': run.lane });
  }
  const agent = session.agentId ?? 'main';
  const remote = parseTraceparent(leader.meta?.traceparent, leader.meta?.tracestate);
  const stored = contextOfRun(leader.meta, remote);
  const perRun = telemetry.traceTree === 'run';
  const started = performance.now();
  const attributes: Attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': agent,
    'gen_ai.conversation.id': session.key,
    'colloquy.run.id': leader.runId,
    'colloquy.lane': leader.lane,
  };
  if (runs.length > 1) attributes['colloquy.run.folded'] = runs.length;
  if (session.kind) attributes['colloquy.session.kind'] = session.kind;
  // The tree id, when the stored context gives it; a turn that starts a trace takes its trace id.
  const storedTree = typeof leader.meta?.traceTree === 'string' ? leader.meta.traceTree : remote?.traceId;
  if (storedTree !== undefined) attributes['colloquy.tree.id'] = storedTree;
  const options: SpanOptions = { kind: SpanKind.INTERNAL, attributes, root: perRun };
  if (perRun && remote) options.links = [{ context: remote }];
  const span = tracer.startSpan(`invoke_agent ${agent}`, options, stored);
  const treeId = storedTree ?? span.spanContext().traceId;
  if (storedTree === undefined && span.isRecording()) span.setAttribute('colloquy.tree.id', treeId);
  const turnContext = withTreeId(trace.setSpan(stored, span), treeId);
  let mcpTools: ReadonlySet<string> = NO_TOOLS;
  let status = 'done';

  return {
    context: turnContext,
    useMcpTools(tools) {
      mcpTools = new Set(tools.map((tool) => tool.name));
    },
    modelCall: (request) => startModelCall(telemetry, turnContext, session.key, request),
    toolCall: (call, run) => traceToolCall(telemetry, turnContext, call, mcpTools.has(call.name), run),
    outcome(outcome) {
      status = outcome.status;
      if (!span.isRecording()) return;
      span.setAttribute('colloquy.run.status', outcome.status);
      if (outcome.usage) {
        span.setAttributes({
          'gen_ai.usage.input_tokens': outcome.usage.inputTokens,
          'gen_ai.usage.output_tokens': outcome.usage.outputTokens,
        });
      }
      if (outcome.status !== 'done') failSpan(span, outcome.status, outcome.error);
    },
    end() {
      metrics.turnDuration.record((performance.now() - started) / 1000, {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': agent,
        'colloquy.lane': leader.lane,
        ...(status !== 'done' ? { 'error.type': status } : {}),
      });
      span.end();
    },
  };
}

function startModelCall(
  telemetry: Telemetry,
  parent: Context,
  conversation: string,
  request: { provider: string; model: string; system: string; messages: readonly ModelMessage[] },
): ModelCallTrace {
  const { tracer, metrics } = telemetry;
  const common: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': request.provider,
    'gen_ai.request.model': request.model,
  };
  const span = tracer.startSpan(
    `chat ${request.model}`,
    { kind: SpanKind.CLIENT, attributes: { ...common, 'gen_ai.conversation.id': conversation } },
    parent,
  );
  if (telemetry.recordContent && span.isRecording()) {
    span.setAttributes({
      'gen_ai.system_instructions': telemetry.content(
        JSON.stringify([{ type: 'text', content: request.system }]),
      ),
      'gen_ai.input.messages': telemetry.content(JSON.stringify(request.messages.map(messageParts))),
    });
  }
  const started = performance.now();
  let first = false;
  return {
    firstChunk() {
      if (first) return;
      first = true;
      metrics.timeToFirstChunk.record((performance.now() - started) / 1000, common);
    },
    end(result, error) {
      const seconds = (performance.now() - started) / 1000;
      if (error !== undefined || !result) {
        failSpan(span, error);
        metrics.modelDuration.record(seconds, { ...common, 'error.type': errorTypeOf(error) });
        span.end();
        return;
      }
      metrics.modelDuration.record(seconds, common);
      metrics.tokenUsage.record(result.usage.inputTokens, { ...common, 'gen_ai.token.type': 'input' });
      metrics.tokenUsage.record(result.usage.outputTokens, { ...common, 'gen_ai.token.type': 'output' });
      if (span.isRecording()) {
        span.setAttributes({
          'gen_ai.usage.input_tokens': result.usage.inputTokens,
          'gen_ai.usage.output_tokens': result.usage.outputTokens,
          ...(result.finishReason ? { 'gen_ai.response.finish_reasons': [result.finishReason] } : {}),
        });
        if (telemetry.recordContent) {
          span.setAttribute(
            'gen_ai.output.messages',
            telemetry.content(JSON.stringify([outputParts(result)])),
          );
        }
        if (result.finishReason === 'error')
          failSpan(span, 'MODEL_ERROR', 'The model ended its turn with an error.');
      }
      span.end();
    },
  };
}

async function traceToolCall<T extends { text: string; isError: boolean }>(
  telemetry: Telemetry,
  parent: Context,
  call: { id: string; name: string; arguments: unknown },
  mcp: boolean,
  run: () => Promise<T>,
): Promise<T> {
  const { tracer, metrics } = telemetry;
  const span = tracer.startSpan(
    `execute_tool ${call.name}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.name,
        'gen_ai.tool.call.id': call.id,
        'gen_ai.tool.type': mcp ? 'extension' : 'function',
      },
    },
    parent,
  );
  if (telemetry.recordContent && span.isRecording()) {
    span.setAttribute('gen_ai.tool.call.arguments', telemetry.content(JSON.stringify(call.arguments ?? {})));
  }
  const started = performance.now();
  let failed: string | undefined;
  try {
    const outcome = await telemetry.within(trace.setSpan(parent, span), run);
    if (outcome.isError) {
      failed = 'tool_error';
      failSpan(span, failed, 'The tool returned an error.');
    }
    if (telemetry.recordContent && span.isRecording()) {
      span.setAttribute('gen_ai.tool.call.result', telemetry.content(outcome.text));
    }
    return outcome;
  } catch (error) {
    failed = errorTypeOf(error);
    failSpan(span, error);
    throw error;
  } finally {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      ...(failed ? { 'error.type': failed } : {}),
    };
    metrics.toolDuration.record((performance.now() - started) / 1000, attributes);
    if (mcp) {
      const cut = call.name.indexOf('__');
      metrics.mcpCalls.add(1, {
        'colloquy.mcp.server': call.name.slice(0, cut),
        'gen_ai.tool.name': call.name.slice(cut + 2),
        'colloquy.outcome': failed ? 'error' : 'ok',
      });
    }
    span.end();
  }
}
