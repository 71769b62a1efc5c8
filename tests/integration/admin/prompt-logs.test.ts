import { beforeAll, describe, expect, it } from 'vitest';
import { api, eventually } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createGrantedSession } from '../support/fixtures';
import { createOrganization, rootSession, type Session } from '../support/identity';
import { downloadPromptLogs } from '../support/prompt-logs';
import { storedObjectText, storeObject } from '../support/table';

let orgId: string;
let admin: Session;
let serviceId: string;
let conversationId: string;

beforeAll(async () => {
  ({ orgId, session: admin } = await createOrganization(await rootSession()));
  ({ serviceId } = await createService(admin));
  ({ conversationId } = await startConversation(admin, { service_id: serviceId }));
  await interact(admin, conversationId, 'I said I need help with my printer');
});

describe('get-prompt-logs', () => {
  it("streams a zip holding each log's system prompt, history and metrics, as stored", async () => {
    // Act
    const { status, entries } = await downloadPromptLogs(admin, `${serviceId}/${conversationId}/`);

    // Assess
    expect(status).toBe(200);
    const names = [...entries.keys()];
    expect(names.length).toBeGreaterThanOrEqual(6);
    const pattern = new RegExp(`^${serviceId}/${conversationId}/[a-f0-9]{24}/\\d+-(system|history|metrics)$`);
    expect(names.every((name) => pattern.test(name))).toBe(true);
    for (const name of names) {
      const [, logKey = '', part = ''] = /^(.*)-(system|history|metrics)$/.exec(name) ?? [];
      for (const each of ['system', 'history', 'metrics']) expect(names).toContain(`${logKey}-${each}`);
      // A turn's calls are stored together, beside its logs' keys.
      const stored = JSON.parse(
        await storedObjectText(`prompt-logs/${orgId}/${logKey.slice(0, logKey.lastIndexOf('/') + 1)}calls.json`),
      ) as { calls: Record<string, string>[] };
      const call = stored.calls.find((candidate) => candidate.key === `prompt-logs/${orgId}/${logKey}`);
      expect(entries.get(name)).toBe(call?.[part]);
    }
    const metrics = names
      .filter((name) => name.endsWith('-metrics'))
      .map((name) => JSON.parse(entries.get(name) ?? ''));
    for (const call of metrics) {
      expect(call).toMatchObject({ model: 'deterministic', tokens_estimated: true, cost_usd: 0 });
      expect(call.duration_ms).toBeGreaterThanOrEqual(0);
      expect(call.input_tokens).toBeGreaterThan(0);
      expect(call.output_tokens).toBeGreaterThan(0);
    }
    const histories = names.filter((name) => name.endsWith('-history')).map((name) => entries.get(name) ?? '');
    expect(
      histories.some((history) => history.split('\n---\n').includes('user: I said I need help with my printer')),
    ).toBe(true);
  });

  it('puts an -error file in place of each log the caller may not read', async () => {
    // Prepare: may download logs, but not see into conversations.
    const auditor = await createGrantedSession(admin, [{ permission_name: 'Admin:GetPromptLogs', conditions: {} }]);

    // Act
    const { status, entries } = await downloadPromptLogs(auditor, `${serviceId}/${conversationId}/`);

    // Assess
    expect(status).toBe(200);
    expect(entries.size).toBeGreaterThanOrEqual(2);
    for (const [name, content] of entries) {
      expect(name).toMatch(/-error$/);
      expect(content).toBe('Missing required permission Conversation:GetInteractionInsights.');
    }
  });

  it('ends the zip whole with an -error file for a log that fails to read after the download began', async () => {
    // Prepare: a log whose history is gone (what a partial write or a concurrent expiry leaves).
    const broken = `${serviceId}/${conversationId}/${'f'.repeat(24)}/1-`;
    await storeObject(`prompt-logs/${orgId}/${broken}system`, 'a system prompt whose history is missing');

    // Act
    const { status, entries } = await downloadPromptLogs(admin, `${serviceId}/${conversationId}/`);

    // Assess: `unzip -t` passed inside downloadZip, so the archive is whole.
    expect(status).toBe(200);
    expect(entries.get(`${broken}error`)).toBe('This log could not be read.');
    expect(entries.has(`${broken}system`)).toBe(false);
    expect([...entries.keys()].filter((name) => name.endsWith('-history')).length).toBeGreaterThanOrEqual(2);
  });

  it('logs conversation starters and post-conversation analysis too', async () => {
    // Prepare
    const starters = await api(`/v1/${orgId}/conversation/conversation_starter`, {
      token: admin.token,
      body: {
        service_id: serviceId,
        facets: ['printers'],
        min_count: 1,
        max_count: 1,
        generation_instructions: 'Be brief.',
      },
    });
    expect(starters.status).toBe(200);
    const finished = await api(`/v1/${orgId}/conversation/${conversationId}/finish/`, {
      method: 'POST',
      token: admin.token,
    });
    expect(finished.status).toBeLessThan(300);

    // Act
    const starterLogs = await downloadPromptLogs(admin, `${serviceId}/starters/`);
    const analysisLogs = await eventually(
      async () => {
        const zip = await downloadPromptLogs(admin, `${serviceId}/${conversationId}/analysis/`);
        return zip.status === 200 ? zip : undefined;
      },
      30_000,
      1000,
    );

    // Assess
    expect([...starterLogs.entries.keys()]).toEqual([
      expect.stringMatching(new RegExp(`^${serviceId}/starters/[a-f0-9]{24}/1-system$`)),
      expect.stringMatching(new RegExp(`^${serviceId}/starters/[a-f0-9]{24}/1-history$`)),
      expect.stringMatching(new RegExp(`^${serviceId}/starters/[a-f0-9]{24}/1-metrics$`)),
    ]);
    expect([...starterLogs.entries.values()][0]).toContain('Be brief.');
    expect([...analysisLogs.entries.keys()]).toContain(`${serviceId}/${conversationId}/analysis/memories-1-system`);
  });

  it('answers 404 when no log matches the prefix, and 403 without Admin:GetPromptLogs', async () => {
    const user = await createGrantedSession(admin, [{ permission_name: 'Conversation:*', conditions: {} }]);

    expect((await downloadPromptLogs(admin, `${serviceId}/ffffffffffffffffffffffff/`)).status).toBe(404);
    expect((await downloadPromptLogs(user, `${serviceId}/`)).status).toBe(403);
  });
});
