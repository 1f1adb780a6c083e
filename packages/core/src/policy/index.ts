export type { SendPolicyDecision, SendPolicyTarget } from './send-policy.js';
export { evaluateSendPolicy, parseSendCommand } from './send-policy.js';
export type { SessionAccessDecision, SessionAccessInput, SessionAction } from './session-access.js';
export { checkSessionAccess, effectiveVisibility } from './session-access.js';
