import type { MediaAttachment } from '@colloquy/core';

/**
 * One line per attachment, as the model reads it:
 * `[image: chart.png (image/png, 2048 bytes, 3 s) "weekly chart" ref=<platform ref>]`.
 * Channels hand over metadata only; the line tells the model what it has not seen.
 *
 * @param media - the attachments of one inbound message
 * @returns the lines joined by newlines ('' when there are none)
 */
export function describeMedia(media: readonly MediaAttachment[] | undefined): string {
  if (!media || media.length === 0) return '';
  return media.map(describeOne).join('\n');
}

function describeOne(item: MediaAttachment): string {
  const facts = [
    item.mimeType,
    item.size === undefined ? undefined : `${item.size} bytes`,
    item.durationSeconds === undefined ? undefined : `${item.durationSeconds} s`,
  ].filter((fact): fact is string => fact !== undefined);
  const name = item.fileName ? ` ${item.fileName}` : '';
  const details = facts.length > 0 ? ` (${facts.join(', ')})` : '';
  const caption = item.caption ? ` ${JSON.stringify(item.caption)}` : '';
  const ref = item.ref ? ` ref=${item.ref}` : '';
  return `[${item.kind}:${name}${details}${caption}${ref}]`;
}
