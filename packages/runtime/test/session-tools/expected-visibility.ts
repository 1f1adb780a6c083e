/** The visibility settings of spec section 9. */
export type Visibility = 'self' | 'tree' | 'agent' | 'all';
/** Where a target session sits relative to the requester `agent:main:main`. */
export type Target = 'self' | 'child' | 'sameAgent' | 'otherAllowed' | 'otherDenied';

/**
 * Whether the requester may see a target, stated from spec section 9 independently of the guard
 * (agent-to-agent enabled for `main` and `ops`; a sandboxed requester is clamped to `tree`).
 */
export function expectedVisible(visibility: Visibility, sandboxed: boolean, target: Target): boolean {
  const effective: Visibility =
    sandboxed && (visibility === 'agent' || visibility === 'all') ? 'tree' : visibility;
  switch (target) {
    case 'self':
      return true;
    case 'child':
      return effective !== 'self';
    case 'sameAgent':
      return effective === 'agent' || effective === 'all';
    case 'otherAllowed':
      return effective === 'all';
    case 'otherDenied':
      return false;
  }
}
