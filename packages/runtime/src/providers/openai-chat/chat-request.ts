import type { LanguageModelV4FilePart, LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { ModelToolSpec } from '@colloquy/core/model';
import { toolJsonSchema } from '../model-stream.js';

/** A message of an OpenAI chat completions request. */
export type OpenAiChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | OpenAiUserPart[] }
  | {
      role: 'assistant';
      content: string | null;
      reasoning_content?: string;
      tool_calls?: OpenAiToolCall[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A part of a user message with images. */
export type OpenAiUserPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } };

/** A tool call the assistant made, as sent back in the history. */
export interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The body of a streaming chat completions request. */
export interface OpenAiChatBody {
  model: string;
  messages: OpenAiChatMessage[];
  max_tokens?: number;
  reasoning_effort?: string;
  tools?: { type: 'function'; function: { name: string; description: string; parameters: unknown } }[];
  tool_choice?: 'auto';
  stream: true;
  stream_options: { include_usage: true };
}

/** What {@link openAiChatBody} builds a request from. */
export interface OpenAiChatCall {
  modelId: string;
  prompt: LanguageModelV4Prompt;
  tools: readonly ModelToolSpec[];
  maxOutputTokens?: number;
  reasoningEffort?: string;
}

/**
 * The JSON body of a streaming `POST /chat/completions` for a prompt, in the shape
 * `@ai-sdk/openai-compatible` sends (so servers see the same request whichever client sends it):
 * usage is asked for in the last chunk, tools are JSON Schema functions with `tool_choice: auto`.
 *
 * @param call - model, prompt, tools and limits
 * @returns the request body
 */
export function openAiChatBody(call: OpenAiChatCall): OpenAiChatBody {
  return {
    model: call.modelId,
    messages: toOpenAiChatMessages(call.prompt),
    ...(call.maxOutputTokens !== undefined ? { max_tokens: call.maxOutputTokens } : {}),
    ...(call.reasoningEffort !== undefined ? { reasoning_effort: call.reasoningEffort } : {}),
    ...(call.tools.length > 0
      ? {
          tools: call.tools.map((tool) => ({
            type: 'function' as const,
            function: { name: tool.name, description: tool.description, parameters: toolJsonSchema(tool) },
          })),
          tool_choice: 'auto' as const,
        }
      : {}),
    stream: true,
    stream_options: { include_usage: true },
  };
}

/**
 * Prompt messages to chat completions messages: a user message with one text part becomes a
 * string, images become `image_url` parts (base64 data as a data URL), an assistant's reasoning
 * goes in `reasoning_content`, and each tool result becomes its own `tool` message.
 *
 * @param prompt - the provider prompt (see `toV4Prompt`)
 * @returns the messages
 */
export function toOpenAiChatMessages(prompt: LanguageModelV4Prompt): OpenAiChatMessage[] {
  const messages: OpenAiChatMessage[] = [];
  for (const message of prompt) {
    switch (message.role) {
      case 'system':
        messages.push({ role: 'system', content: message.content });
        break;
      case 'user': {
        const [only] = message.content;
        if (message.content.length === 1 && only?.type === 'text') {
          messages.push({ role: 'user', content: only.text });
          break;
        }
        const parts: OpenAiUserPart[] = [];
        for (const part of message.content) {
          if (part.type === 'text') parts.push({ type: 'text', text: part.text });
          else if (part.mediaType.startsWith('image/')) {
            const url = imageUrl(part);
            if (url !== undefined) parts.push({ type: 'image_url', image_url: { url } });
          }
        }
        messages.push({ role: 'user', content: parts });
        break;
      }
      case 'assistant': {
        let text = '';
        let reasoning = '';
        const calls: OpenAiToolCall[] = [];
        for (const part of message.content) {
          if (part.type === 'text') text += part.text;
          else if (part.type === 'reasoning') reasoning += part.text;
          else if (part.type === 'tool-call') {
            calls.push({
              id: part.toolCallId,
              type: 'function',
              function: { name: part.toolName, arguments: JSON.stringify(part.input ?? {}) },
            });
          }
        }
        messages.push({
          role: 'assistant',
          content: calls.length > 0 && text === '' ? null : text,
          ...(reasoning !== '' ? { reasoning_content: reasoning } : {}),
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        });
        break;
      }
      case 'tool':
        for (const part of message.content) {
          if (part.type !== 'tool-result') continue;
          const output = part.output;
          const content =
            output.type === 'text' || output.type === 'error-text'
              ? output.value
              : output.type === 'execution-denied'
                ? (output.reason ?? 'The tool call was denied.')
                : JSON.stringify(output.value);
          messages.push({ role: 'tool', tool_call_id: part.toolCallId, content });
        }
        break;
    }
  }
  return messages;
}

/** The `image_url` of an image part: its URL, or its bytes as a data URL (references and text have none). */
function imageUrl(part: LanguageModelV4FilePart): string | undefined {
  const { data } = part;
  if (data.type === 'url') return data.url.toString();
  if (data.type !== 'data') return undefined;
  const mediaType = part.mediaType === 'image/*' ? 'image/jpeg' : part.mediaType;
  const base64 = typeof data.data === 'string' ? data.data : Buffer.from(data.data).toString('base64');
  return `data:${mediaType};base64,${base64}`;
}
