/**
 * The text the model reads for an MCP tool result: its content blocks as text, cut to a size the
 * prompt can hold (with a notice saying so), and redacted like history.
 */
import type { Redactor } from '@colloquy/core/internal';

/** The parts of an MCP `CallToolResult` this module reads. */
export interface McpCallResultLike {
  content?: readonly unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * The result's content as one text: text blocks as they are, embedded text resources by their
 * text, resource links by their URI, and binary blocks (image, audio, blob) as a one-line
 * placeholder. Without content blocks, the structured content as JSON.
 *
 * @param result - the MCP tool result
 * @returns the text
 */
export function mcpResultText(result: McpCallResultLike): string {
  const parts: string[] = [];
  for (const block of result.content ?? []) parts.push(blockText(block));
  if (parts.length === 0 && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  return parts.join('\n');
}

function blockText(block: unknown): string {
  if (typeof block !== 'object' || block === null) return '';
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case 'text':
      return String(b.text ?? '');
    case 'image':
    case 'audio':
      return `[${b.type} (${String(b.mimeType ?? 'unknown type')}) left out: binary content is not shown]`;
    case 'resource': {
      const resource = (b.resource ?? {}) as Record<string, unknown>;
      if (typeof resource.text === 'string') return resource.text;
      return `[resource ${String(resource.uri ?? '')} left out: binary content is not shown]`;
    }
    case 'resource_link':
      return `[resource link ${String(b.uri ?? '')}${b.name ? ` (${String(b.name)})` : ''}]`;
    default:
      return `[content of type ${String(b.type)} left out]`;
  }
}

/**
 * Cuts a result text to `maxChars` (never inside a surrogate pair) and says so at the end, then
 * redacts secrets. The notice names the full size and the setting that raises the limit.
 *
 * @param text - the result text
 * @param maxChars - the most characters kept
 * @param redact - the history redactor
 * @returns the text for the model, and whether it was cut
 */
export function fitResultText(
  text: string,
  maxChars: number,
  redact: Redactor,
): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text: redact(text).text, truncated: false };
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  const notice =
    `\n[The result was cut: it had ${text.length.toLocaleString('en-US')} characters and only the first ` +
    `${end.toLocaleString('en-US')} are shown (mcp.maxResultChars). Ask the tool for less, e.g. a narrower query or a page.]`;
  return { text: redact(text.slice(0, end)).text + notice, truncated: true };
}
