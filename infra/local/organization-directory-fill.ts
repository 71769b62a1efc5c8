import { paginateScan } from '@aws-sdk/client-dynamodb';
import { dynamo } from '#shared/aws/clients';
import { fromAttributes } from '#shared/data/attribute-values';
import { config } from '#shared/kernel/config';
import { listInDirectory } from '#shared/organization/index';

/**
 * Enters in the organization directory every organization made before it, once, for a table that
 * predates it (a data dir or a deployment of an earlier version). Until then the directory lists
 * only the organizations made since and those whose users acted since (`listInDirectory` on their
 * principal's load), and the lake's backfill visits only what it lists. Finding the others takes
 * a Scan of the table for organization records: this operator's step, run once, is the only one;
 * the product never scans. Each is listed by the product's own `listInDirectory`, so running it
 * again, or beside live traffic, writes the same. The environment names the table and the root
 * organization, as the platform's.
 */
export const fillOrganizationDirectory = async (): Promise<{ listed: string[] }> => {
  const listed: string[] = [];
  const pages = paginateScan(
    { client: dynamo(), pageSize: 500 },
    {
      TableName: config.tableName,
      FilterExpression: '#entity = :organization AND attribute_not_exists(listed_in_directory)',
      ExpressionAttributeNames: { '#entity': 'entity', '#org': 'org_id' },
      ExpressionAttributeValues: { ':organization': { S: 'organization' } },
      ProjectionExpression: '#org',
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      const orgId = String(fromAttributes(item).org_id);
      // A deleted organization is refused, and its erasure leaves no entry.
      if (await listInDirectory(orgId)) listed.push(orgId);
    }
  }
  return { listed };
};
