import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { agentIdFromSessionKey } from '@colloquy/core/internal';
import type { Store } from '@colloquy/core/store';

/** The folder inside a session workspace that holds its attachment folders. */
export const ATTACHMENTS_SUBDIR = ['.colloquy', 'attachments'] as const;

/**
 * The default root of session workspaces: `workspaces/` beside the store file when the store has
 * one (a SQLite store), else `<tmpdir>/colloquy-workspaces`.
 *
 * @param store - the runtime's store
 * @returns an absolute folder path (not created)
 */
export function defaultWorkspaceRoot(store: Store): string {
  const file = (store as { file?: unknown }).file;
  if (typeof file === 'string' && file !== '' && file !== ':memory:')
    return join(dirname(file), 'workspaces');
  return join(tmpdir(), 'colloquy-workspaces');
}

/**
 * The workspace folder of one session: `<root>/<agentId>/<readable key part>-<hash>`. The name is
 * derived from the key alone (so it can be found again after the session is deleted) and never
 * holds a path separator or `..`.
 *
 * @param root - the workspace root
 * @param sessionKey - the session's internal key
 * @returns the folder path (not created)
 */
export function sessionWorkspaceDir(root: string, sessionKey: string): string {
  const agent = safeSegment(agentIdFromSessionKey(sessionKey) ?? 'shared');
  const rest = sessionKey.split(':').slice(2).join('-') || sessionKey;
  const hash = createHash('sha256').update(sessionKey).digest('hex').slice(0, 12);
  return join(root, agent, `${safeSegment(rest).slice(0, 80)}-${hash}`);
}

/**
 * The folder that holds a session's attachment folders.
 *
 * @param workspace - the session's workspace folder
 * @returns `<workspace>/.colloquy/attachments`
 */
export function attachmentsRoot(workspace: string): string {
  return join(workspace, ...ATTACHMENTS_SUBDIR);
}

function safeSegment(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
  return cleaned === '' ? 'session' : cleaned;
}
