import type { ContentBlock } from '@colloquy/core';
import type { ModelMessage, ModelToolSpec } from '@colloquy/core/model';
import type {
  ModelMessage as AiModelMessage,
  AssistantContent,
  jsonSchema,
  Tool,
  ToolResultPart,
  UserContent,
} from 'ai';

/** Options of {@link toAiSdkMessages}. */
export interface MapMessagesOptions {
  /**
   * Keep `thinking` blocks that carry a signature as reasoning parts (Anthropic wants them back on the
   * tool-use turn). Other providers drop thinking. Default false.
   */
  keepSignedThinking?: boolean;
}

/** The text sent in place of a result the transcript does not have (e.g. after an interrupted run). */
export const MISSING_TOOL_RESULT = 'No result was recorded for this tool call (the run was interrupted).';

/**
 * Converts Colloquy model messages to AI SDK messages: text and images to parts, `toolCall` blocks to
 * `tool-call` parts, `toolResult` messages to `tool` messages with `tool-result` parts (consecutive ones
 * merged). It also repairs what providers reject: a tool call without a result gets an error result,
 * a result without its call is dropped, and empty assistant messages are left out.
 *
 * @param messages - the request's messages, oldest first
 * @param options - see {@link MapMessagesOptions}
 * @returns AI SDK `ModelMessage`s for `streamText({ messages })`
 */
export function toAiSdkMessages(
  messages: readonly ModelMessage[],
  options: MapMessagesOptions = {},
): AiModelMessage[] {
  const out: AiModelMessage[] = [];
  /** Tool calls of the last assistant message still waiting for a result: id -> name. */
  let open = new Map<string, string>();

  const closeOpenCalls = () => {
    if (open.size === 0) return;
    const results: ToolResultPart[] = [...open].map(([toolCallId, toolName]) => ({
      type: 'tool-result',
      toolCallId,
      toolName,
      output: { type: 'error-text', value: MISSING_TOOL_RESULT },
    }));
    appendToolResults(out, results);
    open = new Map();
  };

  for (const message of messages) {
    if (message.role === 'toolResult') {
      if (!open.has(message.toolCallId)) continue; // a result without its call: providers reject it
      open.delete(message.toolCallId);
      appendToolResults(out, [
        {
          type: 'tool-result',
          toolCallId: message.toolCallId,
          toolName: message.toolName,
          output: message.isError
            ? { type: 'error-text', value: message.content }
            : { type: 'text', value: message.content },
        },
      ]);
      continue;
    }
    closeOpenCalls();
    if (message.role === 'user') {
      const content = toUserContent(message.content);
      if (content !== undefined) out.push({ role: 'user', content });
      continue;
    }
    const content = toAssistantContent(message.content, options);
    if (content === undefined) continue;
    out.push({ role: 'assistant', content });
    if (typeof content !== 'string') {
      for (const part of content) if (part.type === 'tool-call') open.set(part.toolCallId, part.toolName);
    }
  }
  closeOpenCalls();
  return out;
}

/**
 * Converts tool specs to AI SDK tools: JSON Schema through `jsonSchema()` and no `execute`, so the
 * model's calls come back to the caller (the runtime runs tools itself).
 */
export function toAiSdkTools(
  tools: readonly ModelToolSpec[],
  sdk: { jsonSchema: typeof jsonSchema },
): Record<string, Tool> {
  const out: Record<string, Tool> = {};
  for (const spec of tools) {
    let inputSchema = inputSchemas.get(spec.parameters);
    if (!inputSchema) {
      inputSchema = sdk.jsonSchema(plainJsonSchema(spec.parameters));
      inputSchemas.set(spec.parameters, inputSchema);
    }
    out[spec.name] = { description: spec.description, inputSchema };
  }
  return out;
}

/**
 * AI SDK input schemas by parameter schema object: tools are built anew for every turn, but their
 * schemas are module constants, so each is copied and wrapped once, not on every model call.
 */
const inputSchemas = new WeakMap<object, ReturnType<typeof jsonSchema>>();

function appendToolResults(out: AiModelMessage[], results: ToolResultPart[]): void {
  const last = out[out.length - 1];
  if (last?.role === 'tool') last.content.push(...results);
  else out.push({ role: 'tool', content: results });
}

function toUserContent(content: string | ContentBlock[]): UserContent | undefined {
  if (typeof content === 'string') return content;
  const parts: Exclude<UserContent, string> = [];
  for (const block of content) {
    if (block.type === 'text') parts.push({ type: 'text', text: block.text });
    else if (block.type === 'image' && block.data) {
      parts.push({ type: 'file', data: block.data, mediaType: block.mimeType });
    } else if (block.type === 'image') {
      parts.push({ type: 'text', text: `[image omitted${block.bytes ? `, ${block.bytes} bytes` : ''}]` });
    }
  }
  return parts.length > 0 ? parts : undefined;
}

function toAssistantContent(
  content: string | ContentBlock[],
  options: MapMessagesOptions,
): AssistantContent | undefined {
  if (typeof content === 'string') return content.length > 0 ? content : undefined;
  const parts: Exclude<AssistantContent, string> = [];
  for (const block of content) {
    if (block.type === 'text') {
      if (block.text.length > 0) parts.push({ type: 'text', text: block.text });
    } else if (block.type === 'toolCall') {
      parts.push({
        type: 'tool-call',
        toolCallId: block.id,
        toolName: block.name,
        input: block.arguments ?? {},
      });
    } else if (block.type === 'thinking' && options.keepSignedThinking && block.thinkingSignature) {
      parts.push({
        type: 'reasoning',
        text: block.thinking,
        providerOptions: { anthropic: { signature: block.thinkingSignature } },
      });
    }
  }
  return parts.length > 0 ? parts : undefined;
}

/**
 * A JSON copy of a schema: TypeBox schemas carry symbol keys and may hold `undefined` values, which
 * JSON Schema consumers should never see.
 */
function plainJsonSchema(schema: Record<string, unknown>): Parameters<typeof jsonSchema>[0] {
  return JSON.parse(JSON.stringify(schema)) as Parameters<typeof jsonSchema>[0];
}
