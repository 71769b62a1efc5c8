import { publicJwks } from '#shared/auth/signing-keys';
import { createOrganization } from '#shared/composition/organization-creation';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { ValidationError } from '#shared/kernel/errors';
import { clusterName } from '#shared/kernel/schemas';
import { organizationOperations } from '#shared/organization/operations';
import { getOrganizationView, getUserDimensions, modifyOrganization } from '#shared/organization/organizations';
import { createApiKey, deleteApiKey, listApiKeys } from '#shared/user/api-keys';

export const handler = httpHandler(
  implementGroup('organization', [organizationOperations], {
    'get-organization': ({ path, caller }) => getOrganizationView(path.organization, caller),
    'create-organization': async ({ path, headers, body, caller }) => {
      const cluster = clusterName(headers);
      if (!cluster) {
        throw new ValidationError([
          {
            loc: ['header', 'x-database-cluster-name'],
            msg: 'Field required (or x-mongo-cluster-name).',
            type: 'missing',
          },
        ]);
      }
      const devopsTeamName = body.devops_team_name ?? body.azure_devops_team_name;
      return {
        org_id: await createOrganization(
          path.organization,
          caller,
          { ...body, devops_team_name: devopsTeamName },
          cluster,
        ),
      };
    },
    'modify-organization': ({ path, body, caller }) => modifyOrganization(path.organization, caller, body),
    'delete-organization': async ({ path, caller }) => {
      // Erasure reaches every capability's records: loaded by the rare request that needs it.
      const { deleteOrganization } = await import('#shared/composition/organization-erasure');
      await deleteOrganization(path.organization, caller);
      return undefined;
    },
    'create-api-key': ({ path, body, caller }) => createApiKey(path.organization, caller, body),
    'get-api-keys': async ({ path, caller }) => ({ api_keys: await listApiKeys(path.organization, caller) }),
    'delete-api-key': ({ path, caller }) => deleteApiKey(path.organization, caller, path.api_key_id),
    'get-user-dimensions': async ({ path, caller }) => ({
      user_dimensions: await getUserDimensions(path.organization, caller),
    }),
    'get-jwks': async () => (await publicJwks()) as never,
  }),
);
