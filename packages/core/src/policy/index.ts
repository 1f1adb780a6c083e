export type { SendPolicyDecision, SendPolicyTarget } from './send-policy.js';
export { evaluateSendPolicy, parseSendCommand } from './send-policy.js';
export type {
  SessionAccessDecision,
  SessionAccessInput,
  SessionAction,
  UnreachableTargetInput,
} from './session-access.js';
export { checkSessionAccess, effectiveVisibility, unreachableTargetReason } from './session-access.js';
