import { describe, expect, it } from 'vitest';
import { api, eventually, expectStatus } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { sampleStateMachineVersion } from '../support/fixtures';
import { createUserSession, rootSession, type Session } from '../support/identity';
import { runSimulateCli } from '../support/simulation';

/** A finished, analysed conversation of a new user of the service. */
const conversationOf = async (root: Session, serviceId: string, said: string): Promise<string> => {
  const user = await createUserSession(root, 'DefaultUserRole');
  const { conversationId } = await startConversation(user, { service_id: serviceId });
  await interact(user, conversationId, said);
  const finished = await api(`/v1/${root.orgId}/conversation/${conversationId}/finish/`, {
    method: 'POST',
    token: user.token,
  });
  expectStatus('finish', finished, 204);
  return conversationId;
};

describe('npm run simulate --backtest', () => {
  it('passes a candidate that answers as before, and gates a promotion: rejected beyond the divergence allowed, promoted within it', async () => {
    // Prepare
    const root = await rootSession();
    const { serviceId, machineId } = await createService(root);
    const conversations = [
      await conversationOf(root, serviceId, 'My printer jams on every page'),
      await conversationOf(root, serviceId, 'I would like a refund'),
    ];
    // The candidate (edge) greets in a state of another name: every turn's state path differs.
    const machine = sampleStateMachineVersion();
    const renamed = JSON.parse(JSON.stringify(machine).replaceAll('"greet"', '"welcome"'));
    const version = await api(`/v1/${root.orgId}/organization/service_hierarchical_state_machine/${machineId}/`, {
      token: root.token,
      body: renamed,
    });
    expectStatus('create state machine version 2', version, 201);
    const cli = (args: string[]) =>
      runSimulateCli([
        '--backtest',
        '--service',
        serviceId,
        ...conversations.flatMap((id) => ['--conversation', id]),
        ...args,
      ]).then(({ code, stdout, stderr }) => ({ code, output: `${stdout}${stderr}` }));
    const release = async () => {
      const response = await api(`/v1/${root.orgId}/service/`, { token: root.token, query: { id: serviceId } });
      return response.body.services[0].version_sets.release.service_hierarchical_state_machine_version_number;
    };

    // Act
    const unchanged = await cli(['--candidate', 'release', '--max-divergence-rate', '0']);
    const rejected = await cli(['--candidate', 'edge', '--max-divergence-rate', '0', '--promote', 'release']);
    const afterRejected = await release();
    const promoted = await cli(['--candidate', 'edge', '--max-divergence-rate', '1', '--promote', 'release']);

    // Assess
    expect(unchanged.code, unchanged.output).toBe(0);
    expect(unchanged.output).toContain('overall: 0/2 conversations diverged (0.0%)');
    expect(rejected.code, rejected.output).toBe(1);
    expect(rejected.output).toContain('rejected');
    expect(afterRejected).toBe(1);
    expect(promoted.code, promoted.output).toBe(0);
    expect(promoted.output).toContain("promoted; 'release' is now at revision");
    expect(await eventually(async () => ((await release()) === 2 ? true : undefined))).toBe(true);
  });
});
