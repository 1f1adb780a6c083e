import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import type { FinishReason, ModelToolSpec, TokenUsage } from '@colloquy/core/model';
import type { ModelMessage as AiModelMessage, LanguageModel } from 'ai';

/**
 * The direct path to an AI SDK provider model: `doStream` of a specification v4 model, without
 * `streamText` on top. A Colloquy turn is one step whose tool calls the runtime runs itself, so the
 * step loop, output assembly and tool validation of `streamText` are not needed, and they cost more
 * CPU than the provider's own HTTP call and stream parsing (about 2 ms per call in the bench).
 */

/** What one model call yields on the direct path; errors are thrown. */
export type DirectPart =
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; id: string; name: string; arguments: unknown }
  | { type: 'finish'; finishReason: FinishReason; usage: TokenUsage };

/** True for a model the direct path can call (an object implementing specification v4, as AI SDK 7 providers do). */
export function isV4Model(model: LanguageModel): model is LanguageModelV4 {
  return typeof model === 'object' && model !== null && model.specificationVersion === 'v4';
}

/** The call options of {@link streamDirect}. */
export interface DirectCall {
  system: string;
  messages: AiModelMessage[];
  tools: readonly ModelToolSpec[];
  maxOutputTokens?: number;
  providerOptions?: LanguageModelV4CallOptions['providerOptions'];
  abortSignal: AbortSignal;
}

/**
 * Streams one call through `model.doStream`. Tool call arguments are parsed from JSON; arguments that
 * do not parse are passed on as the raw string, for the caller to reject.
 *
 * @throws the provider's error (an `APICallError` for HTTP failures, an `error` part's error mid-stream)
 */
export async function* streamDirect(model: LanguageModelV4, call: DirectCall): AsyncGenerator<DirectPart> {
  const { stream } = await model.doStream({
    prompt: toV4Prompt(call.system, call.messages),
    ...(call.tools.length > 0 ? { tools: toV4Tools(call.tools), toolChoice: { type: 'auto' } } : {}),
    ...(call.maxOutputTokens !== undefined ? { maxOutputTokens: call.maxOutputTokens } : {}),
    ...(call.providerOptions ? { providerOptions: call.providerOptions } : {}),
    abortSignal: call.abortSignal,
  });
  for await (const part of stream) {
    switch (part.type) {
      case 'text-delta':
        yield { type: 'text-delta', text: part.delta };
        break;
      case 'tool-call':
        yield {
          type: 'tool-call',
          id: part.toolCallId,
          name: part.toolName,
          arguments: parseToolArguments(part.input),
        };
        break;
      case 'finish':
        // A stream that ended without the model finishing yields no finish: the caller reports it as
        // cut off (`stream-interrupted`) instead of passing an incomplete turn on as complete.
        if (part.finishReason.unified === 'interrupted') break;
        yield { type: 'finish', finishReason: part.finishReason.unified, usage: fromV4Usage(part.usage) };
        break;
      case 'error':
        throw part.error;
      default:
        break; // stream-start, metadata, text and tool-input boundaries, reasoning, raw
    }
  }
}

/** Tool call arguments from JSON; arguments that do not parse are passed on as the raw string. */
export function parseToolArguments(input: string): unknown {
  if (input.trim() === '') return {};
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

/** Provider usage to Colloquy's: missing counts are 0; `contextTokens` is the prompt size. */
function fromV4Usage(usage: LanguageModelV4Usage): TokenUsage {
  const inputTokens = usage.inputTokens.total ?? 0;
  const outputTokens = usage.outputTokens.total ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    contextTokens: inputTokens,
  };
}

/** JSON copies of tool parameter schemas, by schema object (tools are built per turn, schemas are constants). */
const jsonSchemas = new WeakMap<object, LanguageModelV4FunctionTool['inputSchema']>();

/**
 * A tool's parameter schema as plain JSON, copied once per schema object: TypeBox schemas carry
 * symbol keys and may hold `undefined` values, which a provider request must not see.
 *
 * @param spec - the tool
 * @returns the JSON schema (shared: do not mutate)
 */
export function toolJsonSchema(spec: ModelToolSpec): LanguageModelV4FunctionTool['inputSchema'] {
  let schema = jsonSchemas.get(spec.parameters);
  if (!schema) {
    schema = JSON.parse(JSON.stringify(spec.parameters)) as LanguageModelV4FunctionTool['inputSchema'];
    jsonSchemas.set(spec.parameters, schema);
  }
  return schema;
}

function toV4Tools(tools: readonly ModelToolSpec[]): LanguageModelV4FunctionTool[] {
  return tools.map((spec) => ({
    type: 'function',
    name: spec.name,
    description: spec.description,
    inputSchema: toolJsonSchema(spec),
  }));
}

/** AI SDK messages (as `toAiSdkMessages` builds them) to the provider prompt `streamText` would build. */
export function toV4Prompt(system: string, messages: readonly AiModelMessage[]): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  if (system !== '') prompt.push({ role: 'system', content: system });
  for (const message of messages) {
    const converted = toV4Message(message);
    if (converted) prompt.push(converted);
  }
  return prompt;
}

function toV4Message(message: AiModelMessage): LanguageModelV4Message | undefined {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user': {
      if (typeof message.content === 'string') {
        return { role: 'user', content: [{ type: 'text', text: message.content }] };
      }
      const content: Extract<LanguageModelV4Message, { role: 'user' }>['content'] = [];
      for (const part of message.content) {
        if (part.type === 'text') content.push({ type: 'text', text: part.text });
        // toAiSdkMessages sends images as base64 strings.
        else if (part.type === 'file' && typeof part.data === 'string') {
          content.push({ type: 'file', data: { type: 'data', data: part.data }, mediaType: part.mediaType });
        }
      }
      return { role: 'user', content };
    }
    case 'assistant': {
      if (typeof message.content === 'string') {
        return { role: 'assistant', content: [{ type: 'text', text: message.content }] };
      }
      const content: Extract<LanguageModelV4Message, { role: 'assistant' }>['content'] = [];
      for (const part of message.content) {
        if (part.type === 'text') content.push({ type: 'text', text: part.text });
        else if (part.type === 'tool-call') {
          content.push({
            type: 'tool-call',
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
          });
        } else if (part.type === 'reasoning') {
          content.push({
            type: 'reasoning',
            text: part.text,
            ...(part.providerOptions ? { providerOptions: part.providerOptions } : {}),
          });
        }
      }
      return { role: 'assistant', content };
    }
    case 'tool': {
      const content: Extract<LanguageModelV4Message, { role: 'tool' }>['content'] = [];
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        const output = part.output;
        if (output.type === 'text' || output.type === 'error-text') {
          content.push({ type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output });
        }
      }
      return { role: 'tool', content };
    }
  }
}
