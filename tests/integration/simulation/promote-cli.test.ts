import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { api, expectStatus, harness } from '../support/client';
import { createService, sampleAgentVersionBody, uniqueName } from '../support/fixtures';
import { rootSession, type Session } from '../support/identity';
import { createUnitTest, createUnitTestSet } from '../support/simulation';

const exec = promisify(execFile);

/** A set of one unit test on the service, run once, whose criterion passes when the conversation mentions `word`. */
const gateSet = async (session: Session, serviceId: string, word: string): Promise<string> => {
  const metric = await api(`/v1/${session.orgId}/metric/`, {
    token: session.token,
    body: {
      name: uniqueName(`Mentions ${word}`),
      description: `Whether the conversation talks about the ${word}.`,
      metric_value: { type: 'boolean' },
      applied_to_services: [],
    },
  });
  expectStatus('create metric', metric, 201);
  const { unitTestId } = await createUnitTest(session, { serviceId, metricId: metric.body.id });
  return createUnitTestSet(session, [unitTestId], { unit_test_runs: [{ unit_test_id: unitTestId, run_count: 1 }] });
};

describe('npm run simulate --promote', () => {
  it('promotes release only when the gate passes: exit 1 and release unchanged, then exit 0 and release moved', async () => {
    // Prepare
    const root = await rootSession();
    const { serviceId, agentId } = await createService(root);
    const version = await api(`/v1/${root.orgId}/organization/agent/${agentId}/`, {
      token: root.token,
      body: sampleAgentVersionBody({ background: 'Version 2.' }),
    });
    expectStatus('create agent version 2', version, 201);
    const [passing, failing] = await Promise.all([
      gateSet(root, serviceId, 'printer'),
      gateSet(root, serviceId, 'refund'),
    ]);
    const { credentials, baseUrl } = harness();
    const cli = (setId: string, service: string[] = []) =>
      exec(
        'npx',
        [
          'tsx',
          'infra/cli/simulate.ts',
          ...['--base-url', baseUrl, '--org', credentials.org_id, '--set', setId],
          ...['--promote', 'release', ...service, '--min-pass-rate', '0.9', '--junit', '/dev/null'],
        ],
        {
          env: {
            ...process.env,
            AMIGO_API_KEY: credentials.api_key,
            AMIGO_API_KEY_ID: credentials.api_key_id,
            AMIGO_USER_ID: credentials.user_id,
          },
        },
      ).then(
        (result) => ({ code: 0, output: result.stdout }),
        (error: { code: number; stdout: string; stderr: string }) => ({
          code: error.code,
          output: `${error.stdout}${error.stderr}`,
        }),
      );
    const release = async () => {
      const response = await api(`/v1/${root.orgId}/service/`, { token: root.token, query: { id: serviceId } });
      return response.body.services[0].version_sets.release;
    };

    // Act
    const rejected = await cli(failing, ['--service', serviceId]);
    const afterRejected = await release();
    // Without --service: the one service the set's unit tests run on.
    const promoted = await cli(passing);
    const afterPromoted = await release();

    // Assess
    expect(rejected.code, rejected.output).toBe(1);
    expect(rejected.output).toContain('rejected');
    expect(afterRejected.agent_version_number).toBe(1);
    expect(promoted.code, promoted.output).toBe(0);
    expect(promoted.output).toContain("promoted (pass rate 100.0%); 'release' is now at revision 2");
    expect(afterPromoted.agent_version_number).toBe(2);
  });
});
