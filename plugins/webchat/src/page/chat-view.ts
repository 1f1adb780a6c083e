import type { ChatMessage, ChatPerson } from '../protocol/frames.js';
import { clock, el } from './dom.js';
import { renderMarkdown } from './render-markdown.js';

/** Who the page belongs to and how the assistant is called. */
export interface ViewIdentity {
  you: ChatPerson;
  assistantName: string;
  group: boolean;
}

interface Stream {
  item: HTMLLIElement;
  bubble: HTMLDivElement;
  text: string;
  frame: number | undefined;
  expire: number | undefined;
}

const GROUP_WINDOW_MS = 3 * 60_000;
/** A finished run whose final message does not arrive by then (e.g. delivery was refused) is removed. */
const ORPHAN_STREAM_MS = 6000;

/**
 * The message list: history, new messages, optimistic own messages and streamed replies.
 */
export class ChatView {
  private identity: ViewIdentity | undefined;
  private readonly streams = new Map<string, Stream>();
  private readonly pending = new Map<string, HTMLLIElement>();
  /** Runs whose final message arrived or that ended: late frames for them are ignored. */
  private readonly finished = new Set<string>();

  constructor(
    private readonly list: HTMLOListElement,
    private readonly scroller: HTMLElement,
    private readonly empty: HTMLElement,
  ) {}

  /** Sets who "you" are (after `ready` and `profile`). */
  setIdentity(identity: ViewIdentity): void {
    this.identity = identity;
  }

  /** Replaces the list with the server's history, keeping own messages that were never confirmed. */
  showHistory(messages: readonly ChatMessage[]): void {
    const unsent = [...this.pending.values()];
    this.list.replaceChildren();
    for (const stream of this.streams.values()) this.clearStream(stream);
    this.streams.clear();
    for (const message of messages) {
      const item = this.renderMessage(message);
      this.list.append(item);
      this.regroup(item);
    }
    for (const item of unsent) this.list.append(item);
    this.refreshEmpty();
    this.scrollToEnd(true);
  }

  /** Shows an own message at once, before the server confirms it. */
  addPending(clientId: string, text: string): void {
    if (!this.identity) return;
    const item = this.renderMessage({
      id: clientId,
      role: 'user',
      text,
      sender: this.identity.you,
      at: Date.now(),
    });
    item.classList.add('pending');
    this.pending.set(clientId, item);
    this.list.append(item);
    this.refreshEmpty();
    this.scrollToEnd(true);
  }

  /** Marks an own message as refused, with the server's reason. */
  failPending(clientId: string, reason: string): void {
    const item = this.pending.get(clientId);
    if (!item) return;
    this.pending.delete(clientId);
    item.classList.remove('pending');
    item.classList.add('failed');
    item.append(el('div', 'msg-error', reason));
  }

  /** Adds a confirmed message (or replaces the pending or streamed one it finalises). */
  addMessage(message: ChatMessage, clientId?: string): void {
    const follow = this.nearEnd();
    const item = this.renderMessage(message);
    const pending = clientId === undefined ? undefined : this.pending.get(clientId);
    const stream = message.runId === undefined ? undefined : this.streams.get(message.runId);
    if (message.runId !== undefined) this.markFinished(message.runId);
    if (pending) {
      this.pending.delete(clientId!);
      pending.replaceWith(item);
    } else if (stream) {
      this.streams.delete(message.runId!);
      this.clearStream(stream);
      stream.item.replaceWith(item);
    } else if (!this.shown(message.id)) {
      this.list.append(item);
    }
    this.regroup(item);
    this.refreshEmpty();
    this.scrollToEnd(follow || message.sender?.id === this.identity?.you.id);
  }

  /**
   * Shows the new text of an edited message in its bubble, in place: the same element, so a screen
   * reader hears the new text once (the bubble is atomic) and a progress line does not jump (nothing
   * when it is not shown).
   */
  replaceMessage(message: ChatMessage): void {
    const bubble = this.shown(message.id)?.querySelector<HTMLDivElement>('.bubble');
    if (bubble) fillBubble(bubble, message);
  }

  /** Removes a deleted message's bubble. */
  removeMessage(id: string): void {
    const shown = this.shown(id);
    if (!shown) return;
    const next = shown.nextElementSibling as HTMLLIElement | null;
    shown.remove();
    if (next) this.regroup(next);
    this.refreshEmpty();
  }

  /** A run started streaming into this chat. */
  startStream(runId: string): void {
    if (this.streams.has(runId) || this.finished.has(runId)) return;
    const follow = this.nearEnd();
    const item = this.renderShell(
      'assistant',
      false,
      this.identity?.assistantName ?? 'Assistant',
      Date.now(),
    );
    item.classList.add('streaming');
    item.dataset.run = runId;
    const bubble = item.querySelector<HTMLDivElement>('.bubble')!;
    bubble.append(el('span', 'caret'));
    this.streams.set(runId, { item, bubble, text: '', frame: undefined, expire: undefined });
    this.list.append(item);
    this.regroup(item);
    this.refreshEmpty();
    this.scrollToEnd(follow);
  }

  /** Appends streamed text (rendered at most once per animation frame). */
  appendDelta(runId: string, text: string): void {
    if (!this.streams.has(runId)) this.startStream(runId);
    const stream = this.streams.get(runId);
    if (!stream) return;
    stream.text += text;
    if (stream.frame !== undefined) return;
    stream.frame = requestAnimationFrame(() => {
      stream.frame = undefined;
      const follow = this.nearEnd();
      stream.bubble.replaceChildren(renderMarkdown(stream.text));
      lastTextBlock(stream.bubble).append(el('span', 'caret'));
      this.scrollToEnd(follow);
    });
  }

  /** A run ended: failed runs lose their partial text; finished ones wait briefly for the final message. */
  endStream(runId: string, status: string | undefined): void {
    this.markFinished(runId);
    const stream = this.streams.get(runId);
    if (!stream) return;
    stream.item.classList.remove('streaming');
    stream.bubble.querySelector('.caret')?.remove();
    const drop = (): void => {
      if (this.streams.get(runId) !== stream) return;
      this.streams.delete(runId);
      this.clearStream(stream);
      stream.item.remove();
      this.refreshEmpty();
    };
    if (status !== 'done') drop();
    else stream.expire = window.setTimeout(drop, ORPHAN_STREAM_MS);
  }

  // A Set, not lru-cache: the page is plain ES modules served without a bundler, so it imports no packages.
  private markFinished(runId: string): void {
    this.finished.add(runId);
    if (this.finished.size > 500) this.finished.delete(this.finished.values().next().value!);
  }

  private shown(id: string): HTMLLIElement | null {
    return this.list.querySelector<HTMLLIElement>(`[data-id="${CSS.escape(id)}"]`);
  }

  private clearStream(stream: Stream): void {
    if (stream.frame !== undefined) cancelAnimationFrame(stream.frame);
    window.clearTimeout(stream.expire);
  }

  private renderMessage(message: ChatMessage): HTMLLIElement {
    const mine = message.role === 'user' && message.sender?.id === this.identity?.you.id;
    const name =
      message.role === 'assistant'
        ? (this.identity?.assistantName ?? 'Assistant')
        : mine
          ? 'You'
          : (message.sender?.name ?? 'Guest');
    const item = this.renderShell(message.role, mine, name, message.at);
    item.dataset.id = message.id;
    item.dataset.author = message.role === 'assistant' ? 'assistant' : (message.sender?.id ?? '');
    const bubble = item.querySelector<HTMLDivElement>('.bubble')!;
    // The assistant's messages may be edited: a changed bubble is read whole, on its own.
    if (message.role === 'assistant') bubble.setAttribute('aria-atomic', 'true');
    fillBubble(bubble, message);
    return item;
  }

  private renderShell(role: string, mine: boolean, name: string, at: number): HTMLLIElement {
    const item = el('li', 'msg');
    item.dataset.role = role;
    item.dataset.mine = String(mine);
    item.dataset.at = String(at);
    item.dataset.author = role === 'assistant' ? 'assistant' : '';
    const avatar = el('div', 'avatar', initials(name));
    avatar.setAttribute('aria-hidden', 'true');
    const body = el('div', 'body');
    const meta = el('div', 'meta');
    meta.append(el('span', 'who', name), el('time', 'when', clock(at)));
    body.append(meta, el('div', 'bubble'));
    item.append(avatar, body);
    return item;
  }

  /** Hides the name line of a message that follows one by the same author within a few minutes. */
  private regroup(item: HTMLLIElement): void {
    const prev = item.previousElementSibling as HTMLLIElement | null;
    const same =
      prev !== null &&
      prev.dataset.author === item.dataset.author &&
      item.dataset.author !== '' &&
      Number(item.dataset.at) - Number(prev.dataset.at) < GROUP_WINDOW_MS;
    item.classList.toggle('cont', same);
  }

  private refreshEmpty(): void {
    this.empty.hidden = this.list.childElementCount > 0;
  }

  private nearEnd(): boolean {
    const { scrollTop, scrollHeight, clientHeight } = this.scroller;
    return scrollHeight - scrollTop - clientHeight < 120;
  }

  private scrollToEnd(force: boolean): void {
    if (force) this.scroller.scrollTop = this.scroller.scrollHeight;
  }
}

/** Puts a message's text in its bubble: the assistant's markdown rendered, anything else as plain text. */
function fillBubble(bubble: HTMLDivElement, message: ChatMessage): void {
  const plain = message.role !== 'assistant' || message.format === 'plain';
  bubble.classList.toggle('plain', plain);
  if (plain) bubble.textContent = message.text;
  else bubble.replaceChildren(renderMarkdown(message.text));
}

const BLOCKS = /^(P|LI|OL|UL|BLOCKQUOTE|H[1-6]|PRE|CODE|DIV|TABLE|THEAD|TBODY|TR|TD|TH)$/;

/** The innermost last block of a rendered message, where the streaming caret follows the text. */
function lastTextBlock(root: HTMLElement): Element {
  let target: Element = root;
  for (
    let last = target.lastElementChild;
    last && BLOCKS.test(last.tagName);
    last = target.lastElementChild
  ) {
    target = last;
  }
  return target;
}

function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.length > 1 ? [words[0]![0], words[1]![0]] : [...(words[0] ?? '?')].slice(0, 1);
  return letters.join('').toUpperCase();
}
