import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { getAgentVersion } from '../agent/agent-repository';
import { createAgent, createAgentVersion, deprecateAgent } from '../agent/agents';
import { sampleAgentVersionBody } from '../agent/fixtures';
import { eraseOrganizationData } from '../composition/entity-catalog';
import type { Caller } from '../kernel/caller';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { caller, createSampleService, prepareAgentAndMachine } from './fixtures';
import { versionSetInput } from './schemas';
import { getService } from './service-repository';
import { deleteVersionSet, listServices, updateService, upsertVersionSet } from './services';
import { isAgentUsedByActiveService } from './usage';
import { resolveVersionSet } from './version-sets';

/** An agent and a state machine with one version each, in a fresh organization. */
const prepare = async () => {
  const records = await prepareAgentAndMachine();
  const service = (name: string, isActive: boolean, extra: Record<string, unknown> = {}) =>
    createSampleService(records, name, isActive, extra);
  return { ...records, service };
};

describe('services domain (DynamoDB Local)', () => {
  useLocalAws();

  it('gives concurrent agent versions distinct consecutive numbers', async () => {
    // Prepare
    const orgId = `org-${newId()}`;
    const { id } = await createAgent(orgId, caller, 'Ada');
    await createAgentVersion(orgId, caller, id, sampleAgentVersionBody());

    // Act
    const created = await Promise.all(
      [1, 2, 3, 4].map((index) => createAgentVersion(orgId, caller, id, { background: `Take ${index}.` })),
    );

    // Assess
    expect(created.map((version) => version.version).sort()).toEqual([2, 3, 4, 5]);
    expect((await getAgentVersion(orgId, id, 5))?.initials).toBe('AB');
  });

  it('rejects a version parameter that is not the next number with 409', async () => {
    // Prepare
    const orgId = `org-${newId()}`;
    const { id } = await createAgent(orgId, caller, 'Ada');

    // Act
    const attempt = createAgentVersion(orgId, caller, id, sampleAgentVersionBody(), { expectedVersion: 2 });

    // Assess
    await expect(attempt).rejects.toThrow(/The next version of agent .* is 1, not 2/);
  });

  it('allows one active service per name and any number of inactive ones', async () => {
    // Prepare
    const { orgId, service } = await prepare();
    await service('Support', true);

    // Act
    const inactive = await service('Support', false);

    // Assess
    await expect(service('Support', true)).rejects.toThrow(/An active service named 'Support' already exists/);
    await expect(updateService(orgId, caller, inactive.id, { is_active: true })).rejects.toThrow(ConflictError);
  });

  it('frees the active name when a service is renamed or deactivated', async () => {
    // Prepare
    const { orgId, service } = await prepare();
    const first = await service('Support', true);
    await updateService(orgId, caller, first.id, { name: 'Support (old)' });

    // Act
    const second = await service('Support', true);
    await updateService(orgId, caller, second.id, { is_active: false });
    const third = await service('Support', true);

    // Assess
    expect((await getService(orgId, third.id))?.is_active).toBe(true);
  });

  it('refuses to deprecate an agent an active service uses, and deprecates it once unused', async () => {
    // Prepare
    const { orgId, agentId, service } = await prepare();
    const { id } = await service('Support', true);

    // Act
    await expect(deprecateAgent(orgId, caller, agentId)).rejects.toThrow(BadRequestError);
    await updateService(orgId, caller, id, { is_active: false });
    await deprecateAgent(orgId, caller, agentId);

    // Assess
    await expect(deprecateAgent(orgId, caller, agentId)).rejects.toThrow(ConflictError);
    await expect(updateService(orgId, caller, id, { is_active: true })).rejects.toThrow(/deprecated/);
  });

  it('moves the active use to the new agent when an active service switches agents', async () => {
    // Prepare
    const { orgId, agentId, service } = await prepare();
    const { id } = await service('Support', true);
    const other = await createAgent(orgId, caller, 'Bea');
    await createAgentVersion(orgId, caller, other.id, sampleAgentVersionBody());

    // Act
    await updateService(orgId, caller, id, { agent_id: other.id });

    // Assess
    expect(await isAgentUsedByActiveService(orgId, agentId)).toBe(false);
    expect(await isAgentUsedByActiveService(orgId, other.id)).toBe(true);
    await deprecateAgent(orgId, caller, agentId);
    await expect(deprecateAgent(orgId, caller, other.id)).rejects.toThrow(BadRequestError);
  });

  it('resolves edge to the latest versions and release to its pinned ones', async () => {
    // Prepare
    const { orgId, agentId, machineId, service } = await prepare();
    const { id } = await service('Support', true);
    await createAgentVersion(orgId, caller, agentId, { background: 'Newer.' });

    // Act
    const edge = await resolveVersionSet(orgId, id, 'edge');
    const release = await resolveVersionSet(orgId, id, 'release');

    // Assess
    expect(edge).toMatchObject({ agentId, agentVersion: 2, stateMachineId: machineId, stateMachineVersion: 1 });
    expect(release).toMatchObject({ agentVersion: 1, stateMachineVersion: 1, llmModelPreferences: {} });
    await expect(resolveVersionSet(orgId, id, 'nope')).rejects.toThrow(NotFoundError);
  });

  it('upserts and deletes version sets, protecting edge and release', async () => {
    // Prepare
    const { orgId, service } = await prepare();
    const { id } = await service('Support', false);
    const set = versionSetInput.parse({
      agent_version_number: 1,
      service_hierarchical_state_machine_version_number: 1,
    });
    // Creating a version set and replacing one need different permissions (of a caller who may see the service).
    const mayOnlyCreate: Caller = {
      ...caller,
      grants: [
        { action: 'Allow', permission_name: 'Service:GetService', conditions: {} },
        { action: 'Allow', permission_name: 'Service:CreateVersionSet', conditions: {} },
      ],
    };

    // Act
    await upsertVersionSet(orgId, mayOnlyCreate, id, 'canary', set);
    const replaceRefused = await upsertVersionSet(orgId, mayOnlyCreate, id, 'canary', set).catch(
      (error: unknown) => error,
    );
    await upsertVersionSet(orgId, caller, id, 'canary', set);
    await deleteVersionSet(orgId, caller, id, 'canary');

    // Assess
    expect(replaceRefused).toBeInstanceOf(ForbiddenError);
    expect((replaceRefused as Error).message).toContain('Service:UpdateVersionSet');
    await expect(upsertVersionSet(orgId, caller, id, 'edge', set)).rejects.toThrow(BadRequestError);
    await expect(deleteVersionSet(orgId, caller, id, 'release')).rejects.toThrow(BadRequestError);
    expect(Object.keys((await getService(orgId, id))?.version_sets ?? {}).sort()).toEqual(['edge', 'release']);
  });

  it('lists services sorted by name with tag filter values counted over every service', async () => {
    // Prepare
    const { orgId, service } = await prepare();
    await service('b', false, { tags: { team: 'blue' } });
    await service('a', true, { tags: { team: 'red' } });
    await service('c', false, { tags: { team: 'blue', beta: null } });

    // Act
    const page = await listServices(orgId, caller, {
      tags: [{ key: 'team', value: 'blue' }],
      sortBy: [{ field: 'name', direction: 'desc' }],
      limit: 1,
      continuationToken: 0,
    });

    // Assess
    expect(page.services.map((listed) => listed.name)).toEqual(['c']);
    expect(page.has_more).toBe(true);
    expect(page.filter_values?.tags.sort()).toEqual(['beta:', 'team:blue', 'team:red']);
  });

  it('erases every record of an organization', async () => {
    // Prepare
    const { orgId, service } = await prepare();
    const { id } = await service('Support', true);

    // Act
    await eraseOrganizationData(orgId);

    // Assess
    expect(await getService(orgId, id)).toBeUndefined();
  });
});
