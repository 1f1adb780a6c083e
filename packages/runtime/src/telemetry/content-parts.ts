import type { ModelMessage } from '@colloquy/core/model';
import type { ModelCallResult } from './turn-trace.js';

/** A message in the GenAI conventions' shape (`role` and `parts`), for `gen_ai.input.messages`. */
interface GenAiMessage {
  role: string;
  parts: Record<string, unknown>[];
}

/**
 * A prompt message in the GenAI conventions' shape.
 *
 * @param message - the model message
 * @returns the message with parts
 */
export function messageParts(message: ModelMessage): GenAiMessage {
  if (message.role === 'toolResult') {
    return {
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: message.toolCallId, response: message.content }],
    };
  }
  if (typeof message.content === 'string') {
    return { role: message.role, parts: [{ type: 'text', content: message.content }] };
  }
  return {
    role: message.role,
    parts: message.content.map((block) =>
      block.type === 'toolCall'
        ? { type: 'tool_call', id: block.id, name: block.name, arguments: block.arguments }
        : block.type === 'text'
          ? { type: 'text', content: block.text }
          : { type: block.type },
    ),
  };
}

/**
 * A model answer in the GenAI conventions' shape, for `gen_ai.output.messages`.
 *
 * @param result - what the model call produced
 * @returns the message with parts
 */
export function outputParts(result: ModelCallResult): GenAiMessage & { finish_reason?: string } {
  const parts: Record<string, unknown>[] = [];
  if (result.text) parts.push({ type: 'text', content: result.text });
  for (const call of result.calls) {
    parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments });
  }
  return { role: 'assistant', parts, ...(result.finishReason ? { finish_reason: result.finishReason } : {}) };
}
