import { describe, expect, it } from 'vitest';
import { isToolAllowed } from './tool-patterns.js';

describe('isToolAllowed', () => {
  it('matches a server prefix pattern and nothing of another server', () => {
    expect(isToolAllowed('github__create_issue', ['github__*'])).toBe(true);
    expect(isToolAllowed('gitlab__create_issue', ['github__*'])).toBe(false);
  });

  it('matches exact names as whole names only', () => {
    expect(isToolAllowed('fs__read', ['fs__read'])).toBe(true);
    expect(isToolAllowed('fs__read_all', ['fs__read'])).toBe(false);
    expect(isToolAllowed('xfs__read', ['fs__read'])).toBe(false);
  });

  it('lets "*" stand anywhere, and an empty list allow nothing', () => {
    expect(isToolAllowed('fs__search', ['*__search'])).toBe(true);
    expect(isToolAllowed('anything', ['*'])).toBe(true);
    expect(isToolAllowed('anything', [])).toBe(false);
  });

  it('treats "-" and "_" in a pattern literally', () => {
    expect(isToolAllowed('my-server__a', ['my-server__*'])).toBe(true);
    expect(isToolAllowed('myXserver__a', ['my-server__*'])).toBe(false);
  });
});
