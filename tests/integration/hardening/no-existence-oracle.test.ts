import { beforeAll, describe, expect, it } from 'vitest';
import { sampleAgentVersionBody } from '#shared/agent/fixtures';
import { sampleStateMachineVersion } from '#shared/state-machine/fixtures';
import { api } from '../support/client';
import { createService as createConversationService, startConversation } from '../support/conversations';
import { createGrantedSession, createService } from '../support/fixtures';
import { createOrganization, createUserSession, organizationKey, rootSession, type Session } from '../support/identity';

/** A caller who may not read a record gets exactly the answer for a record that does not exist. */
let admin: Session;
let user: Session;
/** A member of the organization whose role grants nothing. */
let stranger: Session;
const missingId = 'f'.repeat(24);
beforeAll(async () => {
  const root = await rootSession();
  ({ session: admin } = await createOrganization(root));
  user = await createUserSession(admin, 'DefaultUserRole');
  stranger = await createGrantedSession(admin, []);
});

/** The answers to the same request on an existing and on a missing record, the ids swapped for comparison. */
const answersFor = async (existingId: string, request: (id: string) => ReturnType<typeof api>) => {
  const [forExisting, forMissing] = [await request(existingId), await request(missingId)];
  return { forExisting, forMissing: forMissing.text.replaceAll(missingId, existingId) };
};

describe('delete-api-key', () => {
  it('answers a user who may not see keys the same 404 for an existing key as for a missing one', async () => {
    // Prepare
    const existing = organizationKey(admin.orgId).api_key_id;
    const missing = 'f'.repeat(24);
    const remove = (keyId: string) =>
      api(`/v1/${admin.orgId}/organization/api_key/${keyId}`, { method: 'DELETE', token: user.token });

    // Act
    const [forExisting, forMissing] = [await remove(existing), await remove(missing)];

    // Assess
    expect(forExisting.status).toBe(404);
    expect(forExisting.text).toBe(forMissing.text.replace(missing, existing));
  });
});

describe('modify-role', () => {
  it('answers a user who may not see roles the same 404 for an existing role as for a missing one', async () => {
    // Prepare
    const modify = (roleName: string) =>
      api(`/v1/${admin.orgId}/role/${roleName}`, { token: user.token, body: { description: 'Changed.' } });

    // Act
    const [forExisting, forMissing] = [await modify('DefaultAdministratorRole'), await modify('NoSuchRole')];

    // Assess
    expect(forExisting.status).toBe(404);
    expect(forExisting.text).toBe(forMissing.text.replace('NoSuchRole', 'DefaultAdministratorRole'));
  });
});

describe('update-service', () => {
  it('answers a member who may not see services the same 404 for an existing service as for a missing one', async () => {
    // Prepare
    const { serviceId } = await createService(admin);

    // Act
    const { forExisting, forMissing } = await answersFor(serviceId, (id) =>
      api(`/v1/${admin.orgId}/service/${id}/`, { token: stranger.token, body: { description: 'Changed.' } }),
    );

    // Assess
    expect(forExisting.status).toBe(404);
    expect(forExisting.text).toBe(forMissing);
  });
});

describe('create-agent-version', () => {
  it('answers a member who may not see agents the same 404 for an existing agent as for a missing one', async () => {
    // Prepare
    const { agentId } = await createService(admin);

    // Act
    const { forExisting, forMissing } = await answersFor(agentId, (id) =>
      api(`/v1/${admin.orgId}/organization/agent/${id}/`, { token: stranger.token, body: sampleAgentVersionBody() }),
    );

    // Assess
    expect(forExisting.status).toBe(404);
    expect(forExisting.text).toBe(forMissing);
  });
});

describe('create-service-hierarchical-state-machine-version', () => {
  it('answers a member who may not see state machines the same 404 for an existing machine as for a missing one', async () => {
    // Prepare
    const { stateMachineId } = await createService(admin);

    // Act
    const { forExisting, forMissing } = await answersFor(stateMachineId, (id) =>
      api(`/v1/${admin.orgId}/organization/service_hierarchical_state_machine/${id}/`, {
        token: stranger.token,
        body: sampleStateMachineVersion(),
      }),
    );

    // Assess
    expect(forExisting.status).toBe(404);
    expect(forExisting.text).toBe(forMissing);
  });
});

describe('get-conversation-messages', () => {
  it('answers a member who may not see a conversation the same 404 as for a missing one, not an empty page', async () => {
    // Prepare
    const { serviceId } = await createConversationService(admin);
    const { conversationId } = await startConversation(user, { service_id: serviceId });

    // Act
    const { forExisting, forMissing } = await answersFor(conversationId, (id) =>
      api(`/v1/${admin.orgId}/conversation/${id}/messages/`, { token: stranger.token }),
    );

    // Assess
    expect(forExisting.status).toBe(404);
    expect(forExisting.text).toBe(forMissing);
  });
});
