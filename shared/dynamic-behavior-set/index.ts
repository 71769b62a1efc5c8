/** What other capabilities may use of dynamic-behavior-set's records; everything else stays behind its domain functions. */
export {
  allBehaviorSets,
  behaviorInvocationItem,
  getBehaviorVersions,
  type StoredBehaviorVersion,
} from './behavior-set-repository';
