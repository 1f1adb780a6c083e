/**
 * The web chat WebSocket protocol: JSON text frames, one object per frame, told apart by `type`.
 * This file holds types only, so the browser page shares them at no cost.
 */
import type { SessionsTreeResult } from '@colloquy/core/gateway';

/** Who wrote a chat message. */
export type ChatRole = 'user' | 'assistant';

/** The public face of a person in a chat: an alias (never the id behind the cookie) and a name. */
export interface ChatPerson {
  /** A public alias of the person, stable for one visitor; never the id behind the cookie. */
  id: string;
  /** The display name. */
  name: string;
}

/** One chat message as the page shows it. `text` is markdown for the assistant, plain for people. */
export interface ChatMessage {
  /** The message's id: its platform message id, else `seq_<seq>` for transcript messages. */
  id: string;
  /** `user` for people, `assistant` for the bot. */
  role: ChatRole;
  /** The message text. */
  text: string;
  /** The author, for `user` messages. */
  sender?: ChatPerson;
  /** Epoch ms. */
  at: number;
  /** The run whose streamed text this final message replaces. */
  runId?: string;
  /** `plain` asks the page not to render markdown. */
  format?: 'markdown' | 'plain';
}

/** The chat a socket is attached to. */
export interface ChatRef {
  /** `direct`: one visitor with the bot; `group`: a named room. */
  type: 'direct' | 'group';
  /** The visitor id (direct) or the room name (group). */
  id: string;
}

/** One row of the owner's session panel. */
export interface SessionRow {
  /** The session's internal key. */
  key: string;
  /** The session kind (`main`, `dm`, `group`, `subagent`, ...). */
  kind: string;
  /** The agent that owns the session. */
  agentId: string;
  /** The session's label, else its display name. */
  label?: string;
  /** The channel the session talks on, when it has one. */
  channel?: string;
  /** The state of the session's latest run (`idle` before any). */
  status: 'idle' | 'running' | 'done' | 'error' | 'timeout' | 'killed';
  /** The internal key of the session that spawned it. */
  spawnedBy?: string;
  /** 0 for top-level sessions, parent depth + 1 for spawned ones. */
  spawnDepth: number;
  /** Epoch milliseconds the latest run started. */
  startedAt?: number;
  /** Epoch milliseconds the latest run ended. */
  endedAt?: number;
  /** Epoch milliseconds of the last activity. */
  updatedAt: number;
  /** Tokens used over the session's runs. */
  totalTokens?: number;
  /** The session's model override (`provider/model`). */
  model?: string;
}

/** Error codes of `error` frames. */
export type ErrorFrameCode =
  | 'invalid_json'
  | 'invalid_frame'
  | 'too_long'
  | 'rate_limited'
  | 'forbidden'
  | 'unavailable'
  | 'internal';

/** Frames the browser sends. */
export type ClientFrame =
  | { type: 'message'; text: string; clientId?: string }
  | { type: 'typing' }
  | { type: 'profile'; name: string }
  | { type: 'ping' }
  | { type: 'sessions.refresh' }
  /** The owner opens a session's transcript (read-only) from the panel. */
  | { type: 'transcript'; key: string }
  /**
   * The owner watches the spawn tree below `key` (the panel's timeline): answered at once and again
   * as its runs start and end. Without `key`: stop watching.
   */
  | { type: 'tree'; key?: string };

/** Frames the server sends. */
export type ServerFrame =
  | {
      type: 'ready';
      you: ChatPerson;
      chat: ChatRef;
      admin: boolean;
      title: string;
      assistantName: string;
      maxMessageChars: number;
    }
  | { type: 'history'; messages: ChatMessage[] }
  | { type: 'message'; message: ChatMessage; clientId?: string }
  /** An assistant message sent earlier was edited: the page replaces the bubble with this id. */
  | { type: 'edit'; message: ChatMessage }
  /** An assistant message sent earlier was deleted: the page removes the bubble with this id. */
  | { type: 'delete'; id: string }
  | { type: 'run'; runId: string; state: 'started' | 'ended'; status?: string; error?: string }
  | { type: 'delta'; runId: string; text: string }
  | { type: 'typing'; role: 'assistant' }
  | { type: 'typing'; role: 'user'; sender: ChatPerson }
  | { type: 'profile'; you: ChatPerson }
  | { type: 'sessions'; now: number; total: number; sessions: SessionRow[] }
  /** The latest messages of a session, for the owner; `total` counts the whole transcript. */
  | { type: 'transcript'; key: string; total: number; messages: ChatMessage[] }
  /** The spawn tree the owner watches (`sessions.tree`), sent on open and as its runs change. */
  | { type: 'tree'; tree: SessionsTreeResult }
  | { type: 'error'; code: ErrorFrameCode; message: string; clientId?: string }
  | { type: 'pong' };
