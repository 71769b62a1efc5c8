import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { transactWrite } from '../data/table';
import { linkUsages, usageTargets } from '../data/usage-links';
import type { Caller } from '../kernel/caller';
import { BadRequestError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { createMetric, deleteMetric, relevance } from './metrics';

const administrator = (orgId: string): Caller => ({
  userId: 'u1',
  homeOrgId: orgId,
  orgId,
  roleId: 'r1',
  roleName: 'DefaultSuperAdministratorRole',
  grants: [{ action: 'Allow', permission_name: '*', conditions: {} }],
  email: 'admin@example.com',
  isVerified: true,
  tokenType: 'Bearer',
});

describe('relevance', () => {
  it('ranks the whole query in the name over name words over description words, and 0 for no match', () => {
    // Prepare
    const metric = (name: string, description: string) => ({ name, description });

    // Act
    const scores = [
      relevance('refund rate', metric('Refund rate', 'Share of refunds.')),
      relevance('refund rate', metric('Refund speed', 'How fast the rate of refunds is.')),
      relevance('refund rate', metric('Refunds given', 'Whether a refund was given.')),
      relevance('refund rate', metric('Politeness', 'Whether the refund was polite.')),
      relevance('refund rate', metric('Politeness', 'Whether the agent was polite.')),
    ];

    // Assess
    expect(scores).toEqual([11, 4, 2, 1, 0]);
  });
});

describe('deleteMetric (DynamoDB Local)', () => {
  useLocalAws();

  it('refuses with 400 while a simulation unit test uses the metric', async () => {
    // Prepare
    const orgId = `o-${newId()}`;
    const caller = administrator(orgId);
    const { id } = await createMetric(orgId, caller, {
      name: 'Used',
      applied_to_services: [],
      additional_notes: null,
      tags: {},
      initial_version: { description: 'Used.', metric_value: { type: 'boolean' } },
    });
    const unitTestId = newId();
    await transactWrite(
      linkUsages(orgId, { user_id: unitTestId, user_name: 'Checks refunds' }, [usageTargets.metric(id)]),
    );

    // Act
    const refused = deleteMetric(orgId, caller, id);

    // Assess
    await expect(refused).rejects.toBeInstanceOf(BadRequestError);
    await expect(refused).rejects.toThrow(`used by simulation unit test 'Checks refunds' (${unitTestId})`);
  });
});
