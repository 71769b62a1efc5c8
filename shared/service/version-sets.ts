import { getAgent } from '../agent/index';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import { getStateMachine } from '../state-machine/index';
import type { LlmConfigInput, LlmConfigRecord, VersionSetInput, VersionSetRecord } from './schemas';
import { getService } from './service-repository';

export const EDGE = 'edge';
export const RELEASE = 'release';

/** Edge follows the latest versions; its stored numbers stay null ("latest") and it has no LLM preference. */
export const edgeVersionSet = (): VersionSetRecord => ({
  agent_version_number: null,
  service_hierarchical_state_machine_version_number: null,
  llm_model_preferences: {},
});

const inRange = (value: number | undefined, low: number, high: number) =>
  value === undefined || (value >= low && value <= high);

const llmConfigRecord = (interaction: string, config: LlmConfigInput): LlmConfigRecord => {
  const problems = [
    inRange(config.top_p, 0, 1) ? undefined : 'top_p must be between 0 and 1',
    inRange(config.temperature, 0, 2) ? undefined : 'temperature must be between 0 and 2',
    config.top_k === undefined || config.top_k >= 1 ? undefined : 'top_k must be at least 1',
  ].filter((problem) => problem !== undefined);
  if (problems.length > 0) {
    throw new BadRequestError(`The LLM config for '${interaction}' is invalid: ${problems.join('; ')}.`);
  }
  const { params, ...rest } = config;
  return { ...rest, params: params ?? {} };
};

export interface LatestVersions {
  agent: number | null;
  stateMachine: number | null;
}

/**
 * A version set as stored, from a request. Pinned numbers must be versions of the service's
 * agent and state machine (versions are numbered 1..latest and never removed); null follows the latest.
 */
export const versionSetFrom = (input: VersionSetInput, latest: LatestVersions): VersionSetRecord => {
  const check = (pinned: number | null, latestNumber: number | null, what: string) => {
    if (pinned !== null && (latestNumber === null || pinned > latestNumber)) {
      throw new BadRequestError(
        `Version ${pinned} of the service's ${what} does not exist (latest: ${latestNumber ?? 'none'}).`,
      );
    }
  };
  check(input.agent_version_number, latest.agent, 'agent');
  check(input.service_hierarchical_state_machine_version_number, latest.stateMachine, 'state machine');
  return {
    agent_version_number: input.agent_version_number,
    service_hierarchical_state_machine_version_number: input.service_hierarchical_state_machine_version_number,
    llm_model_preferences: Object.fromEntries(
      Object.entries(input.llm_model_preferences).map(([interaction, config]) => [
        interaction,
        llmConfigRecord(interaction, config),
      ]),
    ),
  };
};

/** Edge as it resolves at this moment: the latest versions, no LLM preference. */
export const edgeAsOf = (latest: LatestVersions): VersionSetRecord => ({
  ...edgeVersionSet(),
  agent_version_number: latest.agent,
  service_hierarchical_state_machine_version_number: latest.stateMachine,
});

/**
 * How version sets look to clients: edge shows the versions it resolves to right now, so
 * right after creation it equals a defaulted release.
 */
export const presentedVersionSets = (
  versionSets: Record<string, VersionSetRecord>,
  latest: LatestVersions,
): Record<string, VersionSetRecord> => ({ ...versionSets, [EDGE]: edgeAsOf(latest) });

export interface ResolvedVersionSet {
  name: string;
  agentId: string;
  agentVersion: number;
  stateMachineId: string;
  stateMachineVersion: number;
  llmModelPreferences: Record<string, LlmConfigRecord>;
}

/**
 * The agent and state machine versions a conversation started now with `versionSetName` uses.
 * Edge (and any set leaving a number null) takes the latest versions at this moment; other
 * sets give their pinned numbers. 404 for an unknown service or version set.
 */
export const resolveVersionSet = async (
  orgId: string,
  serviceId: string,
  versionSetName: string,
): Promise<ResolvedVersionSet> => {
  // The heads a set following the latest versions needs, read with the service when it is known to need them.
  const known = headsNeeded.get(`${orgId}#${serviceId}#${versionSetName}`);
  const [service, agentHead, machineHead] = await Promise.all([
    getService(orgId, serviceId),
    known?.agentId === undefined ? undefined : getAgent(orgId, known.agentId),
    known?.machineId === undefined ? undefined : getStateMachine(orgId, known.machineId),
  ]);
  if (!service) throw new NotFoundError(`Service ${serviceId} does not exist.`);
  // Own keys only: a name like `constructor` must not find Object's prototype.
  const stored = Object.hasOwn(service.version_sets, versionSetName) ? service.version_sets[versionSetName] : undefined;
  if (!stored) throw new NotFoundError(`Version set '${versionSetName}' does not exist in service ${serviceId}.`);
  const set = versionSetName === EDGE ? edgeVersionSet() : stored;
  const agentId = service.agent_id;
  const machineId = service.service_hierarchical_state_machine_id;
  rememberHeadsNeeded(`${orgId}#${serviceId}#${versionSetName}`, {
    agentId: set.agent_version_number === null ? agentId : undefined,
    machineId: set.service_hierarchical_state_machine_version_number === null ? machineId : undefined,
  });

  const latestOf = async (
    pinned: number | null,
    read: () => Promise<{ latest_version: number | null } | undefined>,
    what: string,
  ) => {
    if (pinned !== null) return pinned;
    const latest = (await read())?.latest_version ?? null;
    if (latest === null) throw new NotFoundError(`The ${what} of service ${serviceId} has no version.`);
    return latest;
  };
  const [agentVersion, stateMachineVersion] = await Promise.all([
    latestOf(
      set.agent_version_number,
      () => (known?.agentId === agentId ? Promise.resolve(agentHead) : getAgent(orgId, agentId)),
      'agent',
    ),
    latestOf(
      set.service_hierarchical_state_machine_version_number,
      () => (known?.machineId === machineId ? Promise.resolve(machineHead) : getStateMachine(orgId, machineId)),
      'service hierarchical state machine',
    ),
  ]);
  return {
    name: versionSetName,
    agentId,
    agentVersion,
    stateMachineId: machineId,
    stateMachineVersion,
    llmModelPreferences: set.llm_model_preferences,
  };
};

/**
 * Per service and version set, the heads (agent, state machine) it took its latest versions from
 * when last resolved in this instance: the next resolution reads them with the service, in one
 * round trip instead of two. What the service names now decides: a head it no longer names is
 * read again after it, so a stale entry costs a round trip, never a wrong version.
 */
const headsNeeded = new Map<string, { agentId?: string; machineId?: string }>();
const maxHeadsNeeded = 1000;

const rememberHeadsNeeded = (key: string, heads: { agentId?: string; machineId?: string }): void => {
  headsNeeded.delete(key);
  if (heads.agentId === undefined && heads.machineId === undefined) return;
  headsNeeded.set(key, heads);
  if (headsNeeded.size > maxHeadsNeeded) headsNeeded.delete(headsNeeded.keys().next().value as string);
};
