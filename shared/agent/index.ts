/** What other capabilities may use of agent's records; everything else stays behind its domain functions. */
export { agents, getAgentVersion } from './agent-repository';
