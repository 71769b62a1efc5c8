import type { CurrentAgentActionEvent } from '../../../events/stream-events';

/** The stream event announcing what the agent does now. */
export const agentAction = (action: CurrentAgentActionEvent['action']): CurrentAgentActionEvent => ({
  type: 'current-agent-action',
  action,
});
