import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { indexesAtUpgradeStep, lastIndexUpgradeStep } from '../../infra/constructs/data-store';
import { cloudAssemblyDir, isCloudAssemblyCurrent } from '../../infra/local/cloud-assembly';
import {
  type AssemblyDigest,
  assemblyDigest,
  indexDigest,
  readSnapshot,
  releaseSnapshotPath,
  releaseTemplatesDir,
  type StackDigest,
  upgradeProblems,
} from './template-digest';

/**
 * An upgrade loses nothing: updating the last release's stacks (kept as a digest by
 * `npm run release-snapshot`) to what `npm run synth` made replaces or removes no stateful
 * resource and creates no API path twice. Reads cdk.out, as the bundle tests do.
 */
const released = readSnapshot(releaseSnapshotPath);
/** The deployment before the API's routes moved into nested stacks (349cec9), whose upgrade the README describes. */
const beforeNestedRoutes = readSnapshot(join(releaseTemplatesDir, 'before-nested-routes.json'));

/** The same digest for every regional stack the assembly holds. */
const asDeployed = (stack: StackDigest, synthesized: AssemblyDigest): AssemblyDigest =>
  Object.fromEntries(Object.keys(synthesized).map((name) => [name, stack]));

describe('upgrading a deployment', () => {
  let synthesized: AssemblyDigest;

  beforeAll(async () => {
    if (!(await isCloudAssemblyCurrent()))
      throw new Error('cdk.out is not the current sources’: run `npm run synth` first');
    synthesized = assemblyDigest(cloudAssemblyDir);
  });

  /** The synthesized digest with the table's indexes as at a step of the index upgrade (README "Deploying"). */
  const atIndexStep = (step: number): AssemblyDigest =>
    Object.fromEntries(
      Object.entries(synthesized).map(([name, stack]) => {
        const copy = structuredClone(stack);
        for (const resource of Object.values(copy.stateful))
          if (resource.type === 'AWS::DynamoDB::Table')
            resource.indexes = indexDigest(
              indexesAtUpgradeStep(step).indexes.map((index) => ({
                IndexName: index.indexName,
                KeySchema: [{ AttributeName: index.partitionKey }, { AttributeName: index.sortKey }],
                Projection: { ProjectionType: index.projection },
              })),
            );
        return [name, copy];
      }),
    );

  it('from the last release replaces or removes no stateful resource and creates no API path twice; its indexes go step by step', () => {
    // Straight to the keys-only indexes, the table would swap all twelve in one update, which DynamoDB refuses.
    expect(upgradeProblems(asDeployed(released.stack, synthesized), synthesized)).toEqual(
      Object.keys(synthesized).map((name) =>
        expect.stringMatching(new RegExp(`^${name}: .* 12 global secondary indexes would be created or deleted`)),
      ),
    );
    // With indexUpgradeStep 1 to 13, one deployment each, nothing is lost or refused.
    const path = [
      asDeployed(released.stack, synthesized),
      ...Array.from({ length: lastIndexUpgradeStep }, (_, index) => atIndexStep(index + 1)),
      synthesized,
    ];
    for (const [index, next] of path.entries())
      if (index > 0) expect(upgradeProblems(path[index - 1] as AssemblyDigest, next)).toEqual([]);
  });

  it('keeps the table, buckets, queues, secrets and log groups of the last release in the digest it checks', () => {
    const types = new Set(Object.values(released.stack.stateful).map((resource) => resource.type));
    expect([...types].sort()).toEqual(
      [
        'AWS::ApiGateway::RestApi',
        'AWS::DynamoDB::Table',
        'AWS::Logs::LogGroup',
        'AWS::S3::Bucket',
        'AWS::SNS::Topic',
        'AWS::SQS::Queue',
        'AWS::SecretsManager::Secret',
      ].sort(),
    );
  });

  it('from before the nested-stack move would create every API path and method twice (the README’s two-step upgrade)', () => {
    const problems = upgradeProblems(asDeployed(beforeNestedRoutes.stack, synthesized), synthesized);
    const stacks = Object.keys(synthesized).length;
    expect(problems.filter((problem) => !problem.includes('would be created twice'))).toEqual([]);
    expect(problems).toHaveLength(stacks * Object.keys(beforeNestedRoutes.stack.api).length);
    expect(problems).toContainEqual(expect.stringContaining(': /v1 would be created twice'));
  });
});

describe('upgradeProblems', () => {
  const stack: StackDigest = {
    stateful: {
      '/Table': { type: 'AWS::DynamoDB::Table', replacing: { KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] } },
      '/Queue': { type: 'AWS::SQS::Queue', replacing: {} },
    },
    api: { '/v1': '/ApiV1', '/v1/agent': 'AgentRoutes/Agent', 'GET /v1/agent': 'AgentRoutes/GetAgent' },
  };
  const update = (change: (copy: StackDigest) => void): string[] => {
    const next = structuredClone(stack);
    change(next);
    return upgradeProblems({ Region: stack }, { Region: next });
  };

  it('finds a stateful resource removed, renamed or given a replacing property', () => {
    expect(update((next) => delete next.stateful['/Queue'])).toEqual([
      'Region: AWS::SQS::Queue /Queue would be removed (or replaced under a new logical id)',
    ]);
    expect(
      update((next) => {
        next.stateful['/Queue'] = { type: 'AWS::SQS::Queue', replacing: { FifoQueue: true } };
      }),
    ).toEqual(['Region: AWS::SQS::Queue /Queue would be replaced: FifoQueue changes']);
    expect(
      update((next) => {
        (next.stateful['/Table'] as { replacing: Record<string, unknown> }).replacing.KeySchema = [];
      }),
    ).toEqual(['Region: AWS::DynamoDB::Table /Table would be replaced: KeySchema changes']);
  });

  it('finds a global secondary index changed in place, and more than one created or deleted in an update', () => {
    const withIndexes = (indexes: Record<string, string>) => (next: StackDigest) => {
      (next.stateful['/Table'] as { indexes?: Record<string, string> }).indexes = indexes;
    };
    const before = { gsi1: 'gsi1pk/gsi1sk ALL' };
    const released: AssemblyDigest = { Region: structuredClone(stack) };
    withIndexes(before)(released.Region as StackDigest);
    const updated = (indexes: Record<string, string>) => {
      const next = structuredClone(released.Region as StackDigest);
      withIndexes(indexes)(next);
      return upgradeProblems(released, { Region: next });
    };
    expect(updated({ gsi1: 'gsi1pk/gsi1sk KEYS_ONLY' })).toEqual([
      'Region: AWS::DynamoDB::Table /Table: global secondary index gsi1 would change in place (gsi1pk/gsi1sk ALL to gsi1pk/gsi1sk KEYS_ONLY)',
    ]);
    expect(updated({ 'gsi1-keys': 'gsi1pk/gsi1sk KEYS_ONLY' })).toEqual([
      'Region: AWS::DynamoDB::Table /Table: 2 global secondary indexes would be created or deleted in one update (one at most)',
    ]);
    expect(updated({ ...before, 'gsi1-keys': 'gsi1pk/gsi1sk KEYS_ONLY' })).toEqual([]);
  });

  it('finds a path or method created under another logical id or in another stack before the old one goes', () => {
    expect(
      update((next) => {
        next.api['GET /v1/agent'] = 'AgentRoutes/GetAgentRenamed';
        next.api['/v1/agent'] = 'OtherRoutes/Agent';
      }),
    ).toEqual([
      'Region: /v1/agent would be created twice: by OtherRoutes/Agent while AgentRoutes/Agent still holds it',
      'Region: GET /v1/agent would be created twice: by AgentRoutes/GetAgentRenamed while AgentRoutes/GetAgent still holds it',
    ]);
  });

  it('accepts new paths, removed paths and new stacks', () => {
    expect(
      update((next) => {
        next.api['/v1/tool'] = 'ToolRoutes/Tool';
        delete next.api['GET /v1/agent'];
      }),
    ).toEqual([]);
    expect(upgradeProblems({}, { Region: stack })).toEqual([]);
  });
});
