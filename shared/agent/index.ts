/** What other capabilities may use of agent's records; everything else stays behind its domain functions. */
export { agentActiveServiceDelta, getAgent, getAgents, getAgentVersion } from './agent-repository';
export { agentLakeSources } from './lake-sources';
