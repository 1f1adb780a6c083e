export type { SendPolicyDecision, SendPolicyTarget } from './send-policy.js';
export { evaluateSendPolicy, parseSendCommand } from './send-policy.js';
export type {
  SessionAccessDecision,
  SessionAccessInput,
  SessionAction,
  UnreachableTargetInput,
} from './session-access.js';
export {
  agentToAgentAdmits,
  checkSessionAccess,
  effectiveVisibility,
  unreachableTargetReason,
} from './session-access.js';
export type { LineageRecord, SessionLineage } from './session-lineage.js';
export { MAX_LINEAGE_DEPTH, readSessionLineage } from './session-lineage.js';
