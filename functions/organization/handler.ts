import { clusterName } from '#shared/kernel/schemas';
import {
  createApiKeyOperation,
  createOrganizationOperation,
  deleteApiKeyOperation,
  deleteOrganizationOperation,
  getApiKeysOperation,
  getJwksOperation,
  getOrganizationOperation,
  getUserDimensionsOperation,
  modifyOrganizationOperation,
} from '#shared/organization/operations';
import { publicJwks } from '#shared/auth/signing-keys';
import { ValidationError } from '#shared/kernel/errors';
import { httpHandler, implement } from '#shared/http/http-handler';
import { createApiKeyFor, deleteApiKeyFor, listApiKeysFor } from '#shared/organization/api-keys';
import {
  createOrganizationFor,
  deleteOrganizationFor,
  getOrganizationView,
  getUserDimensions,
  modifyOrganizationFor,
} from '#shared/organization/organizations';

export const handler = httpHandler([
  implement(getOrganizationOperation, ({ path, caller }) => getOrganizationView(path.organization, caller)),
  implement(createOrganizationOperation, async ({ path, headers, body, caller }) => {
    const cluster = clusterName(headers);
    if (!cluster) {
      throw new ValidationError([
        { loc: ['header', 'x-database-cluster-name'], msg: 'Field required (or x-mongo-cluster-name).', type: 'missing' },
      ]);
    }
    const devopsTeamName = body.devops_team_name ?? body.azure_devops_team_name;
    return { org_id: await createOrganizationFor(caller, path.organization, { ...body, devops_team_name: devopsTeamName }, cluster) };
  }),
  implement(modifyOrganizationOperation, async ({ path, body, caller }) => {
    await modifyOrganizationFor(caller, path.organization, body);
    return undefined;
  }),
  implement(deleteOrganizationOperation, async ({ path, caller }) => {
    await deleteOrganizationFor(caller, path.organization);
    return undefined;
  }),
  implement(createApiKeyOperation, ({ path, body, caller }) => createApiKeyFor(caller, path.organization, body)),
  implement(getApiKeysOperation, async ({ path, caller }) => ({ api_keys: await listApiKeysFor(caller, path.organization) })),
  implement(deleteApiKeyOperation, ({ path, caller }) => deleteApiKeyFor(caller, path.organization, path.api_key_id)),
  implement(getUserDimensionsOperation, async ({ path, caller }) => ({
    user_dimensions: await getUserDimensions(caller, path.organization),
  })),
  implement(getJwksOperation, async () => (await publicJwks()) as never),
]);
