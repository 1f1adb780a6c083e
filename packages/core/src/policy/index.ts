export type { SendPolicyDecision, SendPolicyTarget } from './send-policy.js';
export { evaluateSendPolicy, parseSendCommand } from './send-policy.js';
