export { blockedRange } from './address.js';
export {
  OutboundPolicy,
  OutboundRefused,
  type OutboundPolicyOptions,
  type AgentOptions,
  type Lookup,
} from './policy.js';
export { OutboundClient, OutboundError, type OutboundOptions } from './client.js';
