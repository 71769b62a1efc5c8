import { getAgent, getAgents } from '../agent/index';
import type { VersionedHead } from '../data/versioned-head';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { tagsAsList } from '../kernel/list-params';
import {
  asIfMissing,
  hasPermission,
  type PermissionName,
  permissionCheck,
  requirePermission,
} from '../kernel/permissions';
import { getStateMachine, getStateMachines } from '../state-machine/index';
import { announceFrameworkResourceChange } from '../webhook/events';
import {
  type CreateServiceRequest,
  defaultOperatorEscalation,
  type ServiceRecord,
  type StoredService,
  type UpdateServiceRequest,
  type VersionSetInput,
  type VersionSetRevisionRecord,
} from './schemas';
import {
  type CompanionWrite,
  getService,
  listServiceTags,
  listServices as listStoredServices,
  type ServiceListQuery,
  StaleServiceError,
  saveService,
} from './service-repository';
import { requireServiceUnusedBySimulation, requireVersionSetUnusedBySimulation } from './usage';
import { type RevisionContext, withRevisions } from './version-set-revisions';
import { EDGE, edgeAsOf, edgeVersionSet, presentedVersionSets, RELEASE, versionSetFrom } from './version-sets';

/** What permission grant conditions can name on a service. */
export const serviceAttributes = (
  service: Pick<
    StoredService,
    'id' | 'name' | 'is_active' | 'agent_id' | 'service_hierarchical_state_machine_id' | 'tags'
  >,
) => ({
  id: service.id,
  service_id: service.id,
  name: service.name,
  is_active: service.is_active,
  agent_id: service.agent_id,
  service_hierarchical_state_machine_id: service.service_hierarchical_state_machine_id,
  tags: service.tags,
});

const labels = { agent: 'Agent', stateMachine: 'Service hierarchical state machine' } as const;

/** A service may only start using an agent or state machine that has a version and is not deprecated. */
const requireUsable = (head: VersionedHead, label: string): void => {
  if (head.deprecated) throw new BadRequestError(`${label} ${head.id} is deprecated; a service cannot start using it.`);
  if (head.latest_version === null)
    throw new BadRequestError(`${label} ${head.id} has no version yet; create one first.`);
};

export const requireService = async (orgId: string, serviceId: string): Promise<StoredService> => {
  const service = await getService(orgId, serviceId, true);
  if (!service) throw serviceNotFound(serviceId);
  return service;
};

/**
 * Reads the service, applies `change` and writes it, again from a fresh read if another request
 * got in between. Every version set the change alters gets a revision in the same write
 * (`withRevisions`), described by `options.revision`; `options.companions` adds writes of the
 * caller's, given the revisions made.
 */
export const changeService = async (
  orgId: string,
  serviceId: string,
  change: (service: StoredService) => Promise<StoredService>,
  options: {
    revision?: RevisionContext;
    companions?: (revisions: VersionSetRevisionRecord[]) => CompanionWrite[];
  } = {},
): Promise<void> => {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const current = await requireService(orgId, serviceId);
    try {
      const next = withRevisions(orgId, current, await change(current), options.revision);
      await saveService(orgId, next.service, current, [
        ...next.companions,
        ...(options.companions?.(next.revisions) ?? []),
      ]);
      await announceFrameworkResourceChange(orgId, {
        resourceType: 'service',
        resourceId: serviceId,
        change: 'updated',
      });
      return;
    } catch (error) {
      if (!(error instanceof StaleServiceError)) throw error;
    }
  }
  throw new ConflictError(`Service ${serviceId} is being changed by other requests at the same time; retry.`);
};

export const createService = async (
  orgId: string,
  caller: Caller,
  request: CreateServiceRequest,
): Promise<{ id: string }> => {
  const attributes = {
    name: request.name,
    is_active: request.is_active,
    agent_id: request.agent_id,
    service_hierarchical_state_machine_id: request.service_hierarchical_state_machine_id,
    tags: request.tags,
  };
  requirePermission(caller, 'Service:CreateService', attributes);
  requirePermission(caller, 'Service:CreateVersionSet', attributes);
  const [agent, machine] = await Promise.all([
    getAgent(orgId, request.agent_id),
    getStateMachine(orgId, request.service_hierarchical_state_machine_id),
  ]);
  if (!agent) throw new NotFoundError(`Agent ${request.agent_id} does not exist.`);
  if (!machine) {
    throw new NotFoundError(
      `Service hierarchical state machine ${request.service_hierarchical_state_machine_id} does not exist.`,
    );
  }
  requireUsable(agent, labels.agent);
  requireUsable(machine, labels.stateMachine);
  const latest = { agent: agent.latest_version, stateMachine: machine.latest_version };
  // Without a requested release, release is edge as it resolves now: pinned to today's latest versions.
  const release = request.release_version_set ? versionSetFrom(request.release_version_set, latest) : edgeAsOf(latest);
  const id = newId();
  const now = nowIso();
  const creator = creatorOf(caller);
  const created = withRevisions(orgId, undefined, {
    id,
    name: request.name,
    description: request.description,
    is_active: request.is_active,
    agent_id: agent.id,
    service_hierarchical_state_machine_id: machine.id,
    tags: request.tags,
    keyterms: request.keyterms,
    ...(request.operator_escalation ? { operator_escalation: request.operator_escalation } : {}),
    ...(request.voicemail_message ? { voicemail_message: request.voicemail_message } : {}),
    version_sets: { [EDGE]: edgeVersionSet(), [RELEASE]: release },
    creator,
    updated_by: creator,
    created_at: now,
    updated_at: now,
    revision: 0,
    version_set_revisions: {},
  });
  await saveService(orgId, created.service, undefined, created.companions);
  await announceFrameworkResourceChange(orgId, { resourceType: 'service', resourceId: id, change: 'created' });
  return { id };
};

/** Services as clients see them: tags as a list, edge showing the versions it currently resolves to. */
const serviceViews = async (orgId: string, services: StoredService[]): Promise<ServiceRecord[]> => {
  const [agentHeads, machineHeads] = await Promise.all([
    getAgents(
      orgId,
      services.map((service) => service.agent_id),
    ),
    getStateMachines(
      orgId,
      services.map((service) => service.service_hierarchical_state_machine_id),
    ),
  ]);
  return services.map((service) => ({
    id: service.id,
    name: service.name,
    version_sets: presentedVersionSets(service.version_sets, {
      agent: agentHeads.get(service.agent_id)?.latest_version ?? null,
      stateMachine: machineHeads.get(service.service_hierarchical_state_machine_id)?.latest_version ?? null,
    }),
    description: service.description,
    is_active: service.is_active,
    service_hierarchical_state_machine_id: service.service_hierarchical_state_machine_id,
    agent_id: service.agent_id,
    tags: tagsAsList(service.tags),
    keyterms: service.keyterms,
    operator_escalation: service.operator_escalation ?? defaultOperatorEscalation,
    voicemail_message: service.voicemail_message ?? null,
    creator: service.creator,
    updated_by: service.updated_by,
  }));
};

/** The services the caller may see. */
export const listServices = async (orgId: string, caller: Caller, query: Omit<ServiceListQuery, 'visible'>) => {
  const permitted = permissionCheck(caller, 'Service:GetService');
  const page = await listStoredServices(orgId, {
    ...query,
    visible: (service) => permitted(serviceAttributes(service)),
  });
  const [services, tags] = await Promise.all([
    serviceViews(orgId, page.items),
    // Counted over every service, whatever the caller may see, and only on the first page (as the reference does).
    query.continuationToken === 0 ? listServiceTags(orgId) : undefined,
  ]);
  return {
    services,
    has_more: page.has_more,
    continuation_token: page.continuation_token,
    filter_values: tags === undefined ? null : { tags },
  };
};

/**
 * Checks what a service about to use `head` needs: for an update the reference answers an
 * unknown agent or state machine with 400. Pinned version numbers must exist in a new one.
 */
const checkReplacement = (
  service: StoredService,
  head: VersionedHead | undefined,
  id: string,
  label: string,
  pinnedOf: (set: StoredService['version_sets'][string]) => number | null,
): void => {
  if (!head) throw new BadRequestError(`${label} ${id} does not exist.`);
  requireUsable(head, label);
  const latest = head.latest_version ?? 0;
  const stale = Object.entries(service.version_sets).filter(([, set]) => (pinnedOf(set) ?? 0) > latest);
  if (stale.length > 0) {
    throw new BadRequestError(
      `${label} ${id} has no version pinned by version set(s) ${stale.map(([name]) => `'${name}'`).join(', ')}; ` +
        'change those version sets first (a null version number follows the latest version).',
    );
  }
};

export const serviceNotFound = (serviceId: string) => new NotFoundError(`Service ${serviceId} does not exist.`);

/**
 * Checks `permission` on a loaded service. A caller who may not even see the service gets the
 * answer for a missing one, so its existence does not leak.
 */
export const requireOnService = (
  caller: Caller,
  permission: PermissionName,
  service: StoredService,
  attributes: Record<string, unknown> = serviceAttributes(service),
): void =>
  asIfMissing(
    () => requirePermission(caller, permission, attributes),
    () => serviceNotFound(service.id),
    () => hasPermission(caller, 'Service:GetService', serviceAttributes(service)),
  );

export const updateService = (
  orgId: string,
  caller: Caller,
  serviceId: string,
  patch: UpdateServiceRequest,
): Promise<void> =>
  changeService(orgId, serviceId, async (current) => {
    requireOnService(caller, 'Service:UpdateService', current);
    const next: StoredService = {
      ...current,
      name: patch.name ?? current.name,
      description: patch.description ?? current.description,
      is_active: patch.is_active ?? current.is_active,
      agent_id: patch.agent_id ?? current.agent_id,
      service_hierarchical_state_machine_id:
        patch.service_hierarchical_state_machine_id ?? current.service_hierarchical_state_machine_id,
      tags: patch.tags ?? current.tags,
      keyterms: patch.keyterms ?? current.keyterms,
      ...((patch.operator_escalation ?? current.operator_escalation)
        ? { operator_escalation: patch.operator_escalation ?? current.operator_escalation }
        : {}),
      ...((patch.voicemail_message ?? current.voicemail_message)
        ? { voicemail_message: patch.voicemail_message ?? current.voicemail_message }
        : {}),
      updated_by: creatorOf(caller),
      updated_at: nowIso(),
    };
    const activating = next.is_active && !current.is_active;
    if (next.agent_id !== current.agent_id || activating) {
      checkReplacement(
        next,
        await getAgent(orgId, next.agent_id),
        next.agent_id,
        labels.agent,
        (set) => set.agent_version_number,
      );
    }
    const machineId = next.service_hierarchical_state_machine_id;
    if (machineId !== current.service_hierarchical_state_machine_id || activating) {
      checkReplacement(
        next,
        await getStateMachine(orgId, machineId),
        machineId,
        labels.stateMachine,
        (set) => set.service_hierarchical_state_machine_version_number,
      );
    }
    if (current.is_active && !next.is_active) await requireServiceUnusedBySimulation(orgId, serviceId);
    return next;
  });

/** What permission grant conditions can name on a version set. */
export const versionSetAttributes = (service: StoredService, name: string) => ({
  ...serviceAttributes(service),
  version_set_name: name,
});

/**
 * The service with its version set `name` set to `set`, whose pinned numbers must exist on the
 * service's agent and state machine as they are now (the service may use others since the set was made).
 */
export const withVersionSet = async (
  orgId: string,
  caller: Caller,
  current: StoredService,
  name: string,
  set: VersionSetInput,
): Promise<StoredService> => {
  const [agent, machine] = await Promise.all([
    getAgent(orgId, current.agent_id),
    getStateMachine(orgId, current.service_hierarchical_state_machine_id),
  ]);
  const latest = { agent: agent?.latest_version ?? null, stateMachine: machine?.latest_version ?? null };
  return {
    ...current,
    version_sets: { ...current.version_sets, [name]: versionSetFrom(set, latest) },
    updated_by: creatorOf(caller),
    updated_at: nowIso(),
  };
};

/** Creates or replaces a version set (each needs its own permission). Edge cannot be changed. */
export const upsertVersionSet = (
  orgId: string,
  caller: Caller,
  serviceId: string,
  name: string,
  input: VersionSetInput,
): Promise<void> =>
  changeService(orgId, serviceId, async (current) => {
    const exists = Object.hasOwn(current.version_sets, name);
    requireOnService(
      caller,
      exists ? 'Service:UpdateVersionSet' : 'Service:CreateVersionSet',
      current,
      versionSetAttributes(current, name),
    );
    if (name === EDGE)
      throw new BadRequestError('The edge version set cannot be updated; it always uses the latest versions.');
    return withVersionSet(orgId, caller, current, name, input);
  });

export const deleteVersionSet = (orgId: string, caller: Caller, serviceId: string, name: string): Promise<void> =>
  changeService(orgId, serviceId, async (current) => {
    if (!hasPermission(caller, 'Service:GetService', serviceAttributes(current))) throw serviceNotFound(serviceId);
    if (!Object.hasOwn(current.version_sets, name)) {
      throw new NotFoundError(`Version set '${name}' does not exist in service ${serviceId}.`);
    }
    requirePermission(caller, 'Service:DeleteVersionSet', versionSetAttributes(current, name));
    if (name === EDGE || name === RELEASE) throw new BadRequestError(`The ${name} version set cannot be deleted.`);
    await requireVersionSetUnusedBySimulation(orgId, serviceId, name);
    const { [name]: _removed, ...remaining } = current.version_sets;
    return { ...current, version_sets: remaining, updated_by: creatorOf(caller), updated_at: nowIso() };
  });
