import { describe, expect, it } from 'vitest';
import { api, expectStatus } from '../support/client';
import { createService, sampleAgentVersionBody } from '../support/fixtures';
import { rootSession } from '../support/identity';
import { createWordGateSet, runSimulateCli } from '../support/simulation';

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
      createWordGateSet(root, serviceId, 'printer'),
      createWordGateSet(root, serviceId, 'refund'),
    ]);
    const cli = (setId: string, service: string[] = []) =>
      runSimulateCli([
        '--set',
        setId,
        '--promote',
        'release',
        ...service,
        '--min-pass-rate',
        '0.9',
        '--junit',
        '/dev/null',
      ]).then(({ code, stdout, stderr }) => ({ code, output: `${stdout}${stderr}` }));
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
