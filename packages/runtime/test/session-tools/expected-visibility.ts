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

/**
 * Whether `filtered.hidden` may count a target when it is hidden: only sessions the requester could
 * see under a wider visibility of its own, i.e. its own agent's and those of agents agent-to-agent
 * admits together with `main` (here `ops`, never `sec`). Spec section 11.
 */
export function expectedCountable(target: Target): boolean {
  return target !== 'otherDenied';
}
