import type { ChatMessage } from '../protocol/frames.js';
import { byId, clock, el } from './dom.js';

/**
 * The owner's read-only view of one session's transcript, opened from a row of the session panel.
 * It replaces the session tree until closed; messages are shown as plain text.
 */
export class TranscriptPanel {
  private readonly section = byId('transcript');
  private readonly title = byId('transcript-title');
  private readonly meta = byId('transcript-meta');
  private readonly list = byId<HTMLOListElement>('transcript-list');
  private openKey: string | undefined;
  /** The view the transcript replaced, shown again on close. */
  private back: HTMLElement;

  constructor(
    private readonly tree: HTMLElement,
    private readonly assistantName: () => string,
  ) {
    this.back = tree;
    byId('transcript-close').addEventListener('click', () => this.close());
  }

  /** Shows the view for `key` while its messages load, in place of `from` (default the session tree). */
  loading(key: string, from: HTMLElement = this.tree): void {
    this.openKey = key;
    this.back = from;
    this.title.textContent = key;
    this.title.title = key;
    this.meta.textContent = 'Loading…';
    this.list.replaceChildren();
    from.hidden = true;
    this.section.hidden = false;
  }

  /** Fills the view with a `transcript` frame (ignored when another session was opened since). */
  show(key: string, total: number, messages: readonly ChatMessage[]): void {
    if (key !== this.openKey) return;
    this.meta.textContent =
      messages.length < total ? `last ${messages.length} of ${total} messages` : `${total} messages`;
    if (messages.length === 0) {
      this.list.replaceChildren(el('li', 'tree-empty', 'No messages yet.'));
      return;
    }
    this.list.replaceChildren(...messages.map((m) => this.renderMessage(m)));
    this.list.lastElementChild?.scrollIntoView({ block: 'end' });
  }

  /** Back to the view the transcript was opened from. */
  close(): void {
    this.openKey = undefined;
    this.section.hidden = true;
    this.back.hidden = false;
  }

  private renderMessage(message: ChatMessage): HTMLLIElement {
    const li = el('li', 'transcript-msg');
    li.dataset.role = message.role;
    const who = message.role === 'assistant' ? this.assistantName() : (message.sender?.name ?? 'User');
    const head = el('div', 'transcript-head');
    head.append(el('span', 'who', who), el('span', 'fact', clock(message.at)));
    li.append(head, el('div', 'transcript-text', message.text));
    return li;
  }
}
