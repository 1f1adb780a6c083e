export type { ResolvedAgentConfig } from './agent-config.js';
export { agentConfigFor, defaultAgentId } from './agent-config.js';
export type { ConfigIssue } from './config-issue.js';
export { formatIssue, unknownSettingIssue } from './config-issue.js';
export type { ConfigCheckResult } from './resolve-config.js';
export { checkConfig, DEFAULT_CONFIG, formatIssues, resolveConfig } from './resolve-config.js';
export type { SectionCheck, SectionOptions } from './resolve-section.js';
export { checkSection, resolveSection, sectionError } from './resolve-section.js';
export type {
  AgentEntry,
  ColloquyConfig,
  ColloquyConfigInput,
  DmScope,
  GroupContextConfig,
  ModelPrice,
  ModelProviderCircuitBreaker,
  ModelProviderConfig,
  ModelProviderLimits,
  ModelProviderTimeouts,
  SendPolicyConfig,
  SendPolicyRule,
  SessionScope,
  SessionVisibility,
} from './schema.js';
export { ColloquyConfigSchema } from './schema.js';
export { describeConfigValue, schemaIssues } from './schema-issues.js';
export { isToolAllowed } from './tool-patterns.js';
