/** What other capabilities may use of state-machine's records; everything else stays behind its domain functions. */
export { getStateMachineVersion, type StoredStateMachineVersion, stateMachines } from './state-machine-repository';
