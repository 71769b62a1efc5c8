/** What other capabilities may use of state-machine's records; everything else stays behind its domain functions. */
export {
  getStateMachine,
  getStateMachines,
  getStateMachineVersion,
  type StoredStateMachineVersion,
  stateMachineActiveServiceDelta,
} from './state-machine-repository';
