import {
  type HeadAccess,
  type HeadListRequest,
  requireOnHead,
  versionedAttributes,
  visibleHeads,
} from '../agent/agents';
import type { Paged } from '../data/paging';
import type { HeadView, VersionListQuery } from '../data/versioned-entity';
import type { VersionedHead } from '../data/versioned-head';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, ValidationError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { requirePermission } from '../kernel/permissions';
import { announceFrameworkResourceChange } from '../webhook/events';
import type { StateMachineVersionBody, StateMachineVersionRecord } from './schemas';
import { stateMachines } from './state-machine-repository';
import { toolReferenceProblems } from './tool-references';
import { type ReferencedMachineResolver, validateStateMachineGraph } from './validate-graph';

export const stateMachineAttributes = (machine: Pick<VersionedHead, 'id' | 'name' | 'deprecated'>) =>
  versionedAttributes(machine, 'service_hierarchical_state_machine_id');

const machineAccess: HeadAccess = {
  read: 'Organization:GetServiceHierarchicalStateMachine',
  attributesOf: stateMachineAttributes,
  notFound: stateMachines.notFound,
};

/** Creates a state machine without versions; 409 when the name is taken in the organization. */
export const createStateMachine = async (orgId: string, caller: Caller, name: string): Promise<{ id: string }> => {
  requirePermission(caller, 'Organization:CreateServiceHierarchicalStateMachine', { name });
  const created = await stateMachines.create(orgId, name, creatorOf(caller));
  await announceFrameworkResourceChange(orgId, {
    resourceType: 'state-machine',
    resourceId: created.id,
    change: 'created',
  });
  return created;
};

/** The state machines the caller may see. */
export const listStateMachines = (orgId: string, caller: Caller, query: HeadListRequest): Promise<Paged<HeadView>> =>
  stateMachines.list(orgId, {
    ...query,
    visible: visibleHeads(caller, 'Organization:GetServiceHierarchicalStateMachine', stateMachineAttributes),
  });

/**
 * Loads the state names of every machine version `references` names, so the synchronous graph
 * check can look into them. A deprecated machine counts as missing, as in the reference.
 */
const referencedMachines = async (
  orgId: string,
  version: StateMachineVersionBody,
): Promise<ReferencedMachineResolver> => {
  const entries = await Promise.all(
    Object.values(version.references).map(async ([machineId, number]) => {
      const [head, referenced] = await Promise.all([
        stateMachines.get(orgId, machineId),
        stateMachines.getVersion(orgId, machineId, number),
      ]);
      const names = head && !head.deprecated && referenced ? referenced.states.map((state) => state.name) : undefined;
      return [`${machineId}#${number}`, names] as const;
    }),
  );
  const known = new Map(entries);
  return (machineId, number) => known.get(`${machineId}#${number}`);
};

/**
 * Validates a version as a graph and stores it as the next version (422 with the problems; 400
 * when a referenced machine version does not exist or is deprecated, as the reference answers).
 * A dry run only validates and returns null.
 */
export const createStateMachineVersion = async (
  orgId: string,
  caller: Caller,
  machineId: string,
  body: StateMachineVersionBody,
  options: { expectedVersion?: number; dryRun: boolean },
): Promise<{ version: number; created_at: string } | null> => {
  requireOnHead(
    caller,
    'Organization:CreateServiceHierarchicalStateMachineVersion',
    machineAccess,
  )(await stateMachines.getExisting(orgId, machineId));
  const problems = [
    ...validateStateMachineGraph(body, await referencedMachines(orgId, body)),
    ...(await toolReferenceProblems(orgId, body)),
  ];
  const graphProblems = problems.filter((problem) => problem.type !== 'referenced_machine_not_found');
  if (graphProblems.length > 0) throw new ValidationError(problems);
  if (problems.length > 0) throw new BadRequestError(problems.map((problem) => problem.msg).join(' '));
  if (options.dryRun) return null;

  const created = await stateMachines.appendVersion(orgId, machineId, {
    expectedVersion: options.expectedVersion,
    build: (_latest, next) => ({
      id: newId(),
      org_id: orgId,
      service_hierarchical_state_machine_id: machineId,
      version: next,
      created_at: nowIso(),
      creator: creatorOf(caller),
      ...body,
    }),
  });
  await announceFrameworkResourceChange(orgId, {
    resourceType: 'state-machine',
    resourceId: machineId,
    change: 'updated',
    version: created.version,
  });
  return { version: created.version, created_at: created.created_at };
};

export const listStateMachineVersions = (
  orgId: string,
  caller: Caller,
  machineId: string,
  query: VersionListQuery,
): Promise<Paged<StateMachineVersionRecord>> =>
  stateMachines.listVersions(
    orgId,
    machineId,
    query,
    requireOnHead(caller, 'Organization:GetServiceHierarchicalStateMachine', machineAccess),
  );

/**
 * Deprecates a state machine (the reference's "delete"): versions are kept, but no service can
 * start using it. Fails with 400 while an active service uses it (see `isStateMachineUsedByActiveService`).
 */
export const deleteStateMachine = async (orgId: string, caller: Caller, machineId: string): Promise<void> => {
  await stateMachines.deprecate(
    orgId,
    machineId,
    requireOnHead(caller, 'Organization:DeleteServiceHierarchicalStateMachine', machineAccess),
  );
  await announceFrameworkResourceChange(orgId, {
    resourceType: 'state-machine',
    resourceId: machineId,
    change: 'deleted',
  });
};
