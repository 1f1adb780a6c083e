import type { ChatPerson, ChatRef, ServerFrame } from '../protocol/frames.js';
import { ChatView } from './chat-view.js';
import { type ConnectionState, connect } from './connection.js';
import { byId } from './dom.js';
import { SessionPanel } from './session-panel.js';
import { SpawnTimeline } from './spawn-timeline.js';
import { TranscriptPanel } from './transcript-panel.js';

const NAME_KEY = 'colloquy.webchat.name';
const TYPING_SHOW_MS = 6000;
const TYPING_SEND_EVERY_MS = 3000;
const ROOM = /^[a-z0-9][a-z0-9-]{0,47}$/;

const input = byId<HTMLTextAreaElement>('input');
const sendButton = byId<HTMLButtonElement>('send');
const composer = byId<HTMLFormElement>('composer');
const statusBadge = byId('status');
const statusText = byId('status-text');
const subtitle = byId('subtitle');
const notice = byId('notice');
const limitHint = byId('limit');
const typingLine = byId('typing');
const nameButton = byId<HTMLButtonElement>('name-button');
const panelButton = byId<HTMLButtonElement>('panel-button');
const panel = byId('panel');
const app = byId('app');

const view = new ChatView(byId<HTMLOListElement>('messages'), byId('scroll'), byId('empty'));
const tree = byId<HTMLUListElement>('tree');
const transcript = new TranscriptPanel(tree, () => assistantName);
const timeline = new SpawnTimeline(
  tree,
  (key) => {
    transcript.loading(key, byId('timeline'));
    connection.send({ type: 'transcript', key });
  },
  () => {
    panel.classList.remove('wide');
    connection.send({ type: 'tree' });
  },
);
const sessions = new SessionPanel(
  tree,
  byId('panel-meta'),
  (key) => {
    transcript.loading(key);
    connection.send({ type: 'transcript', key });
  },
  (key) => {
    timeline.loading(key);
    panel.classList.add('wide');
    connection.send({ type: 'tree', key });
  },
);

let chat: ChatRef | undefined;
let you: ChatPerson | undefined;
let assistantName = 'Assistant';
let maxChars = 8000;
let counter = 0;
let lastTypingSent = 0;
let noticeTimer: number | undefined;
/** The owner panel was opened once; reconnects do not reopen it after the owner closed it. */
let panelShown = false;
const typers = new Map<string, number>();

const params = new URLSearchParams(location.search);
const roomParam = params.get('room')?.trim().toLowerCase() ?? '';

function showNotice(text: string): void {
  notice.textContent = text;
  notice.hidden = false;
  window.clearTimeout(noticeTimer);
  noticeTimer = window.setTimeout(() => {
    notice.hidden = true;
  }, 6000);
}

function setState(state: ConnectionState): void {
  statusBadge.dataset.state = state;
  statusText.textContent = state === 'online' ? 'Online' : state === 'connecting' ? 'Connecting' : 'Offline';
  const usable = state === 'online';
  input.disabled = !usable;
  sendButton.disabled = !usable || input.value.trim() === '' || tooLong();
}

function tooLong(): boolean {
  return input.value.trim().length > maxChars;
}

/** Says how much is allowed while the draft is over the limit (the draft is kept, not cut). */
function checkLength(): void {
  const length = input.value.trim().length;
  limitHint.hidden = length <= maxChars;
  if (!limitHint.hidden) {
    limitHint.textContent = `Your message is ${length.toLocaleString('en')} characters; the limit is ${maxChars.toLocaleString('en')}. Shorten it (or send it in parts) to send.`;
  }
}

function renderTyping(): void {
  const now = Date.now();
  for (const [name, until] of typers) if (until <= now) typers.delete(name);
  const names = [...typers.keys()];
  typingLine.replaceChildren();
  if (names.length === 0) return;
  const label =
    names.length === 1
      ? `${names[0]} is typing`
      : names.length === 2
        ? `${names[0]} and ${names[1]} are typing`
        : 'Several people are typing';
  const dots = document.createElement('span');
  dots.className = 'dots';
  dots.append(document.createElement('i'), document.createElement('i'), document.createElement('i'));
  typingLine.append(dots, document.createTextNode(label));
}

function setTyping(name: string, on: boolean): void {
  if (on) typers.set(name, Date.now() + TYPING_SHOW_MS);
  else typers.delete(name);
  renderTyping();
}
window.setInterval(() => {
  if (typers.size > 0) renderTyping();
}, 1000);

function autosize(): void {
  input.style.height = 'auto';
  input.style.height = `${Math.min(input.scrollHeight, Math.round(window.innerHeight * 0.4))}px`;
}

function onFrame(frame: ServerFrame): void {
  switch (frame.type) {
    case 'ready': {
      chat = frame.chat;
      you = frame.you;
      assistantName = frame.assistantName;
      // No maxLength: the browser would cut a long paste without a word. checkLength says it instead.
      maxChars = frame.maxMessageChars;
      checkLength();
      const group = frame.chat.type === 'group';
      view.setIdentity({ you: frame.you, assistantName, group });
      document.title = group ? `#${frame.chat.id} · ${frame.title}` : frame.title;
      subtitle.textContent = group
        ? `#${frame.chat.id} · mention @bot to ask ${assistantName}`
        : `Private chat with ${assistantName}`;
      byId('empty-text').textContent = group
        ? `Everyone in #${frame.chat.id} sees these messages. Mention @bot to ask ${assistantName}.`
        : 'Ask anything. Replies stream in as they are written.';
      input.placeholder = group ? `Message #${frame.chat.id}` : `Message ${assistantName}`;
      nameButton.hidden = !group;
      panelButton.hidden = !frame.admin;
      // A new socket watches nothing yet: ask again for the timeline left open.
      if (frame.admin && timeline.open !== undefined) connection.send({ type: 'tree', key: timeline.open });
      if (frame.admin && !panelShown && window.matchMedia('(min-width: 1000px)').matches) togglePanel(true);
      const saved = localStorage.getItem(NAME_KEY);
      if (group && saved) connection.send({ type: 'profile', name: saved });
      break;
    }
    case 'history':
      view.showHistory(frame.messages);
      break;
    case 'message':
      if (frame.message.role === 'assistant') setTyping(assistantName, false);
      else if (frame.message.sender) setTyping(frame.message.sender.name, false);
      view.addMessage(frame.message, frame.clientId);
      break;
    case 'edit':
      view.replaceMessage(frame.message);
      break;
    case 'delete':
      view.removeMessage(frame.id);
      break;
    case 'run':
      if (frame.state === 'started') view.startStream(frame.runId);
      else view.endStream(frame.runId, frame.status);
      break;
    case 'delta':
      setTyping(assistantName, false);
      view.appendDelta(frame.runId, frame.text);
      break;
    case 'typing':
      if (frame.role === 'assistant') setTyping(assistantName, true);
      else if (chat?.type === 'group' && frame.sender.id !== you?.id) setTyping(frame.sender.name, true);
      break;
    case 'profile':
      you = frame.you;
      view.setIdentity({ you: frame.you, assistantName, group: chat?.type === 'group' });
      break;
    case 'sessions':
      sessions.update(frame.sessions, frame.total, frame.now);
      break;
    case 'transcript':
      transcript.show(frame.key, frame.total, frame.messages);
      break;
    case 'tree':
      timeline.show(frame.tree);
      break;
    case 'error':
      if (frame.clientId) view.failPending(frame.clientId, frame.message);
      else showNotice(frame.message);
      break;
    case 'pong':
      break;
  }
}

function submit(): void {
  const text = input.value.trim();
  if (!text) return;
  if (text.length > maxChars) {
    checkLength();
    return;
  }
  counter += 1;
  const clientId = `c${Date.now().toString(36)}${counter}`;
  if (!connection.send({ type: 'message', text, clientId })) {
    showNotice('Not connected; your message was not sent.');
    return;
  }
  view.addPending(clientId, text);
  input.value = '';
  checkLength();
  autosize();
  sendButton.disabled = true;
}

function togglePanel(open = panel.hidden): void {
  panelShown ||= open;
  panel.hidden = !open;
  app.classList.toggle('with-panel', open);
  panelButton.setAttribute('aria-expanded', String(open));
  if (open) connection.send({ type: 'sessions.refresh' });
}

composer.addEventListener('submit', (event) => {
  event.preventDefault();
  submit();
});
input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit();
  }
});
input.addEventListener('input', () => {
  autosize();
  checkLength();
  sendButton.disabled = input.disabled || input.value.trim() === '' || tooLong();
  const now = Date.now();
  if (chat?.type === 'group' && input.value && now - lastTypingSent > TYPING_SEND_EVERY_MS) {
    lastTypingSent = now;
    connection.send({ type: 'typing' });
  }
});
nameButton.addEventListener('click', () => {
  const name = window.prompt('Your name in this room', localStorage.getItem(NAME_KEY) ?? '')?.trim();
  if (!name) return;
  localStorage.setItem(NAME_KEY, name.slice(0, 40));
  connection.send({ type: 'profile', name: name.slice(0, 40) });
});
panelButton.addEventListener('click', () => togglePanel());
byId('panel-close').addEventListener('click', () => togglePanel(false));

const wsUrl = new URL('ws', location.href);
wsUrl.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
wsUrl.search = roomParam ? `?room=${encodeURIComponent(roomParam)}` : '';

let connection: ReturnType<typeof connect>;
if (roomParam && !ROOM.test(roomParam)) {
  setState('offline');
  subtitle.textContent = 'Invalid room name';
  showNotice('Room names use a-z, 0-9 and "-" (up to 48 characters).');
  connection = { send: () => false };
} else {
  connection = connect(wsUrl.href, onFrame, setState);
}
