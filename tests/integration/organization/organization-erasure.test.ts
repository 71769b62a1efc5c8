import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { connectRealtime } from '../../support/realtime-client';
import { dialMediaStream } from '../../support/twilio-caller';
import type { RecordedRequest } from '../../support/twilio-rest-stand-in';
import { signInToApp } from '../support/app-visitor';
import { api, apiUrl, eventually, expectStatus, harness } from '../support/client';
import { interact, startConversation } from '../support/conversations';
import { createAgent, createService, uniqueName } from '../support/fixtures';
import { createOrganization, createUserSession, organizationKey, rootSession, type Session } from '../support/identity';
import { startTestMcpServer } from '../support/mcp-server';
import { createUnitTest, createUnitTestSet } from '../support/simulation';
import { lakeKeysOf, storedKeysStartingWith, storedObjectsStartingWith, storeObject } from '../support/table';
import { createTool, invoke, publishAndDeploy, setEnvvars } from '../support/tools';
import {
  answeredCallForm,
  incomingCallForm,
  newPhoneNumber,
  newTwilioAccount,
  postTwilioCallback,
  postVoiceWebhook,
  twilioRestRequests,
  twilioSign,
} from '../support/twilio';
import { startWebhookReceiver } from '../support/webhook-receiver';

/** A role, replaced once (a change to an immutable field), so both a current and a replaced role are stored. */
const createReplacedRole = async (admin: Session): Promise<void> => {
  const name = uniqueName('Role').replace(' ', '-');
  const created = await api(`/v1/${admin.orgId}/role/`, {
    token: admin.token,
    body: {
      role_name: name,
      description: 'Erased.',
      permission_grants: [],
      frontend_view: 'client',
      is_base_role: false,
      inherited_from: null,
    },
  });
  expectStatus('create role', created, 201);
  const replaced = await api(`/v1/${admin.orgId}/role/${name}`, {
    method: 'POST',
    token: admin.token,
    body: { frontend_view: 'admin' },
  });
  expectStatus('replace role', replaced, 200);
};

/** A conversation through to its end, waited on until analysed (memories and user models). */
const finishAnalysedConversation = async (user: Session, serviceId: string): Promise<string> => {
  const { conversationId } = await startConversation(user, { service_id: serviceId });
  await interact(user, conversationId, 'I said I need help with my printer');
  await interact(user, conversationId, 'My request is resolved, goodbye');
  await eventually(async () => {
    const response = await api(`/v1/${user.orgId}/conversation/`, { token: user.token, query: { id: conversationId } });
    return response.body.conversations?.[0]?.is_analyzed ? true : undefined;
  }, 30_000);
  return conversationId;
};

/** A simulation session forked once (a fork tree) and a completed backtest of the conversation. */
const simulate = async (admin: Session, serviceId: string, conversationId: string): Promise<void> => {
  const session = await api(`/v1/${admin.orgId}/simulation/session/`, {
    token: admin.token,
    body: { service_id: serviceId },
  });
  expectStatus('create a simulation session', session, 201);
  const fork = await api(`/v1/${admin.orgId}/simulation/session/${session.body.id}/fork`, {
    token: admin.token,
    body: { alternatives: [{ caller_text: 'My printer jams' }] },
  });
  expectStatus('fork the session', fork, 201);
  const backtest = await api(`/v1/${admin.orgId}/simulation/backtest/`, {
    token: admin.token,
    body: { service_id: serviceId, candidate_version_set: 'edge', conversation_ids: [conversationId] },
  });
  expectStatus('backtest', backtest, 201);
  await eventually(
    async () => {
      const read = await api(`/v1/${admin.orgId}/simulation/backtest/${backtest.body.id}`, { token: admin.token });
      return read.body.status === 'completed' ? true : undefined;
    },
    60_000,
    1000,
  );
};

/** An active dynamic behavior set applied to the service, which the conversation below triggers (an invocation). */
const createBehaviorSet = async (admin: Session, serviceId: string): Promise<void> => {
  const created = await api(`/v1/${admin.orgId}/dynamic_behavior_set/`, {
    token: admin.token,
    body: {
      name: uniqueName('Printers'),
      tags: {},
      applied_to_services: [serviceId],
      initial_version: {
        is_active: true,
        conversation_triggers: ['The customer needs help with a printer'],
        action: { type: 'inject-instruction', instruction: 'Ask for the printer model', overrides_instructions: false },
      },
    },
  });
  expectStatus('create dynamic behavior set', created, 201);
};

/** A conversation an operator escalated and holds, with guidance for the agent and a message to the user (audit trail, queue entry). */
const operateConversation = async (admin: Session, user: Session, serviceId: string): Promise<void> => {
  const { conversationId } = await startConversation(user, { service_id: serviceId });
  const operator = (action: string, body?: Record<string, unknown>) =>
    api(`/v1/${admin.orgId}/conversation/${conversationId}/operator/${action}`, {
      method: 'POST',
      token: admin.token,
      ...(body ? { body } : {}),
    });
  expectStatus('escalate', await operator('escalate', { reason: 'Erased.' }), 200);
  expectStatus('take over', await operator('take_over'), 200);
  expectStatus('guidance', await operator('guidance', { guidance: 'Erased.' }), 200);
  expectStatus('operator message', await operator('messages', { message: 'Erased.' }), 200);
};

/** A DPoP-bound session: a refresh token and the proof's one-time value. */
const createDpopSession = async (orgId: string, userId: string): Promise<void> => {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  const url = apiUrl(`/v1/${orgId}/user/token`);
  const proof = await new SignJWT({ htm: 'POST', htu: url, jti: crypto.randomUUID() })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
    .setIssuedAt()
    .sign(privateKey);
  const key = organizationKey(orgId);
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
    body: new URLSearchParams({
      grant_type: 'urn:classic-api:params:oauth:grant-type:api-key',
      api_key_id: key.api_key_id,
      api_key: key.api_key,
      user_id: userId,
    }),
  });
  expectStatus('request a DPoP token', { status: response.status, text: await response.text() }, 200);
};

describe('delete-organization', () => {
  it('erases every entity of the organization, leaving no key under its prefix', async () => {
    // Prepare
    const root = await rootSession();
    const { orgId, session: admin } = await createOrganization(root);
    const receiver = await startWebhookReceiver();
    const destination = await api(`/v1/${orgId}/webhook_destination/`, {
      token: admin.token,
      body: { url: receiver.url, accepted_types: ['agent-framework-resource-updated'] },
    });
    expectStatus('create webhook destination', destination, 201);
    await createReplacedRole(admin);
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { serviceId } = await createService(admin, { body: { tags: { team: 'blue' } } });
    await createBehaviorSet(admin, serviceId);
    // Evaluated after the conversation, so its results are stored too.
    const metric = await api(`/v1/${orgId}/metric/`, {
      token: admin.token,
      body: {
        name: 'Printer help',
        applied_to_services: [serviceId],
        description: 'Whether the user asked about a printer.',
        metric_value: { type: 'boolean' },
      },
    });
    expectStatus('create metric', metric, 201);
    // A simulation catalog over the service: persona, scenario, metric, unit test, set and usage links.
    const { unitTestId } = await createUnitTest(admin, { serviceId });
    const setId = await createUnitTestSet(admin, [unitTestId]);
    // A completed simulation run: its record, its conversations' outcomes and its artifacts zip in the bucket.
    const run = await api(`/v1/${orgId}/simulation/unit_test_set_run/`, {
      token: admin.token,
      body: { simulation_unit_test_set_id: setId },
    });
    expectStatus('start a simulation run', run, 201);
    const runId = run.body.simulation_unit_test_set_run_id as string;
    await eventually(
      async () => {
        const listed = await api(`/v1/${orgId}/simulation/unit_test_set_run/`, {
          token: admin.token,
          query: { id: runId },
        });
        return listed.body.simulation_unit_test_set_runs?.[0]?.artifacts_generated ? true : undefined;
      },
      90_000,
      1000,
    );
    const simulationArtifacts = `simulation-runs/${orgId}/`;
    expect(await storedObjectsStartingWith(simulationArtifacts)).not.toEqual([]);
    // A promotion of release, and the version set revisions it and the service's creation made.
    const promoted = await api(`/v1/${orgId}/service/${serviceId}/version_sets/release/promote`, {
      token: admin.token,
      body: { from: 'edge' },
    });
    expectStatus('promote release', promoted, 201);
    await simulate(admin, serviceId, await finishAnalysedConversation(user, serviceId));
    // Another user's: a user has one unfinished conversation of a service at a time.
    await operateConversation(admin, await createUserSession(admin, 'DefaultUserRole'), serviceId);
    // Spoken: its audio is kept outside the table. Then taken up over a live voice session (its slot is kept in the table).
    const spoken = await startConversation(
      user,
      { service_id: serviceId },
      { response_format: 'voice', audio_format: 'mp3' },
    );
    const live = await connectRealtime({
      baseUrl: harness().baseUrl,
      orgId,
      token: user.token,
      query: { conversation_id: spoken.conversationId },
      microphone: false,
    });
    await live.next('session.created');
    await live.close();
    const paged = await api(`/v1/${orgId}/user/`, { token: admin.token, query: { limit: 1 } });
    expect(paged.body.continuation_token).not.toBeNull();
    await createDpopSession(orgId, user.userId);
    // A web app sign-in session (signed in through its e-mailed link).
    await signInToApp(orgId, user.email);
    const granted = await api(`/v1/${orgId}/role/temporary_permission_grant/`, {
      token: admin.token,
      body: {
        user_id: user.userId,
        duration: 'PT1H',
        permission_grant: { permission_name: 'Organization:GetAPIKey', conditions: {} },
        tags: {},
        justification: 'Erased.',
      },
    });
    expectStatus('grant a temporary permission', granted, 201);
    // A phone number (its auth token sealed in its record) and the user its first caller became.
    const twilio = newTwilioAccount();
    const phoneNumber = newPhoneNumber();
    const number = await api(`/v1/${orgId}/phone_number/`, {
      token: admin.token,
      body: {
        phone_number: phoneNumber,
        service_id: serviceId,
        provider: 'twilio',
        twilio_account_sid: twilio.accountSid,
        twilio_auth_token: twilio.authToken,
      },
    });
    expectStatus('create a phone number', number, 201);
    const call = await postVoiceWebhook(orgId, incomingCallForm(twilio, { to: phoneNumber, from: '+14155550100' }), {
      authToken: twilio.authToken,
    });
    expectStatus('answer a call', call, 200);
    // An outbound call (its record, the guards of its SID and key, its slot), answered and transferred (a
    // timeline entry), and its two-channel recording in the bucket.
    const placed = await api(`/v1/${orgId}/call/outbound`, {
      token: admin.token,
      body: { phone_to: '+14155550177', phone_from: phoneNumber, reason: 'erasure', idempotency_key: 'erased' },
    });
    expectStatus('place a call', placed, 201);
    const callSid = placed.body.call_sid as string;
    const creation = (await twilioRestRequests(twilio.accountSid)).find((request) => request.callSid === callSid);
    const answered = await postTwilioCallback(
      String(creation?.form.StatusCallback),
      { AccountSid: twilio.accountSid, CallSid: callSid, CallStatus: 'in-progress', Direction: 'outbound-api' },
      twilio.authToken,
    );
    expectStatus('answer the outbound call', answered, 204);
    // Its media stream, which the engine records (both channels) when the session ends.
    const voiceUrl = String(creation?.form.Url);
    const twiml = await postTwilioCallback(
      voiceUrl,
      answeredCallForm(twilio, creation as RecordedRequest),
      twilio.authToken,
    );
    expectStatus('stream the outbound call', twiml, 200);
    const streamUrl = (/<Stream url="([^"]+)"/.exec(twiml.text)?.[1] ?? '').replaceAll('&#38;', '&');
    const media = await dialMediaStream({
      streamUrl,
      signature: twilioSign(twilio.authToken, streamUrl),
      accountSid: twilio.accountSid,
      callSid,
      parameters: {},
    });
    await media.hangUp();
    const recordings = `call-recordings/${orgId}/`;
    await eventually(async () => ((await storedObjectsStartingWith(recordings)).length === 2 ? true : undefined));
    const transferred = await api(`/v1/${orgId}/call/${callSid}/transfer`, {
      token: admin.token,
      body: { phone_to: '+14155550178', mode: 'cold' },
    });
    expectStatus('transfer the call', transferred, 202);
    const toolId = await createTool(admin);
    await setEnvvars(admin, toolId, [{ name: 'GREETING', value: 'sealed greeting', is_secret: true }]);
    await invoke(admin, toolId, await publishAndDeploy(admin, toolId, 'samples/greeting'), [{ name: 'Eve' }]);
    const tested = await api(`/v1/${orgId}/tool/test`, {
      token: admin.token,
      body: {
        inputs: [{ input_parameters: { name: 'Eve' } }],
        commit_branch: 'main',
        project_path: 'samples/greeting',
        required_envvars: { GREETING: 'Hi' },
        required_secret_envvars: {},
      },
    });
    expectStatus('test a tool', tested, 200);
    // An MCP server (its headers sealed in its record), whose listed tool is invoked once.
    const mcpServer = await startTestMcpServer();
    const registered = await api(`/v1/${orgId}/tool/mcp_server/`, {
      token: admin.token,
      body: { name: 'orders', url: mcpServer.url, headers: { 'X-Api-Key': mcpServer.apiKey } },
    });
    expectStatus('register an MCP server', registered, 201);
    const lookupOrder = registered.body.tools.find(
      (tool: { mcp_tool_name: string }) => tool.mcp_tool_name === 'lookup_order',
    );
    await invoke(admin, lookupOrder.tool_id, '1.0.0', [{ order_id: 'A-1' }]);
    await mcpServer.close();
    const artifactPrefix = `tools/${orgId}/`;
    const runtimeDir = join(harness().toolRuntimeDir, orgId);
    // What a test stopped half-way would leave (a finished one removes its artifact and code itself).
    await storeObject(`${artifactPrefix}test/interrupted.json.gz`, 'artifact');
    await mkdir(join(runtimeDir, 'test', 'interrupted'), { recursive: true });
    const storedArtifacts = await storedObjectsStartingWith(artifactPrefix);
    const prefix = `ORG#${orgId}#`;
    // The service's agent and state machine were announced to the destination.
    await eventually(async () => (receiver.received.length > 0 ? true : undefined));
    await receiver.close();
    const stored = new Set(
      (
        await eventually(async () => {
          const items = await storedKeysStartingWith(prefix);
          return items.some((item) => item.entity === 'webhook-delivery') ? items : undefined;
        })
      ).map((item) => item.entity),
    );
    const promptLogs = `prompt-logs/${orgId}/`;
    expect(await storedObjectsStartingWith(promptLogs)).not.toEqual([]);
    const voiceAudio = `voice-audio/${orgId}/`;
    expect(await storedObjectsStartingWith(voiceAudio)).not.toEqual([]);

    // The analytics lake: the stream has recorded its conversations and messages, and a query made local copies.
    const lakeKeys = await eventually(async () => {
      const keys = await lakeKeysOf(orgId);
      return ['conversations', 'messages', 'users', 'calls'].every((table) =>
        keys.some((key) => key.startsWith(`${table}/`)),
      )
        ? keys
        : undefined;
    }, 60_000);
    const queried = await api(`/v1/${orgId}/admin/sql_query`, {
      token: admin.token,
      body: { sql_query: 'SELECT count(*) FROM messages' },
    });
    expectStatus('query the lake', queried, 200);
    const lakeCopies = join(harness().lakeCacheDir, `org_id=${orgId}`);
    expect(existsSync(lakeCopies)).toBe(true);

    const webApp = (path: string) => fetch(apiUrl(`/app/${orgId}${path}`)).then((response) => response.status);
    expect([await webApp('/'), await webApp('/favicon.ico')]).toEqual([200, 200]);

    // Act
    const deleted = await api(`/v1/${orgId}/organization/`, { method: 'DELETE', token: admin.token });

    // Assess
    // Leases exist only while an interaction runs; they live in the conversation's partition.
    expect([...stored].sort()).toEqual(
      expect.arrayContaining([
        'agent',
        'agent-name',
        'agent-version',
        'api-key',
        'api-key-counter',
        'app-session',
        'auth-nonce',
        'call',
        'call-key',
        'call-sid',
        'call-timeline-entry',
        'conversation',
        'conversation-event',
        'conversation-operator-action',
        'conversation-user-state',
        'dynamic-behavior-invocation',
        'dynamic-behavior-set',
        'dynamic-behavior-set-active-name',
        'dynamic-behavior-set-version',
        'interaction',
        'mcp-server',
        'mcp-server-name',
        'memory',
        'message',
        'metric',
        'metric-count',
        'metric-name',
        'metric-result',
        'metric-result-metric',
        'metric-version',
        'organization',
        'organization-branding',
        'outbound-call-slot',
        'paging-cursor',
        'phone-number',
        'phone-number-counter',
        'phone-number-e164',
        'refresh-token',
        'replaced-role',
        'role',
        'service',
        'service-active-name',
        'service-tag',
        'simulation-persona',
        'simulation-persona-name',
        'simulation-persona-version',
        'simulation-scenario',
        'simulation-scenario-name',
        'simulation-scenario-version',
        'simulation-backtest',
        'simulation-backtest-conversation',
        'simulation-backtest-turn',
        'simulation-run',
        'simulation-run-conversation',
        'simulation-session',
        'simulation-session-tree',
        'simulation-unit-test',
        'simulation-unit-test-name',
        'simulation-unit-test-set',
        'simulation-unit-test-set-name',
        'simulation-usage',
        'state-machine',
        'state-machine-name',
        'state-machine-version',
        'temporary-permission-grant',
        'tool',
        'tool-invocation',
        'tool-name',
        'tool-version',
        'user',
        'user-email',
        'user-model',
        'version-set-promotion',
        'version-set-revision',
        'voice-session-slot',
        'webhook-delivery',
        'webhook-destination',
        'webhook-destination-counter',
      ]),
    );
    expect(deleted.status).toBe(204);
    // Rate-limit buckets (one partition per subject, see shared/auth/rate-limit.ts) expire by TTL
    // minutes after their last use instead.
    const left = (await storedKeysStartingWith(prefix)).filter((item) => !item.pk.startsWith(`${prefix}RATELIMIT#`));
    expect(left).toEqual([]);
    expect(await storedObjectsStartingWith(promptLogs)).toEqual([]);
    expect(await storedObjectsStartingWith(voiceAudio)).toEqual([]);
    expect(await storedObjectsStartingWith(recordings)).toEqual([]);
    expect(await storedObjectsStartingWith(simulationArtifacts)).toEqual([]);
    // Outside the table: the tool's build artifacts and its deployed code, the test function's included
    // (sealed secrets live in the tool record).
    expect(storedArtifacts).not.toEqual([]);
    expect(await storedObjectsStartingWith(artifactPrefix)).toEqual([]);
    expect(existsSync(runtimeDir)).toBe(false);
    // The lake's folders and the query's copies of them. The stream then brings the removals of its
    // records, which write nothing: once a later change of the root organization is recorded (one
    // stream, in order), the lake still holds nothing of it.
    expect(lakeKeys).not.toEqual([]);
    expect(await lakeKeysOf(orgId)).toEqual([]);
    expect(existsSync(lakeCopies)).toBe(false);
    const rootKeys = new Set(await lakeKeysOf(root.orgId));
    await createAgent(root);
    await eventually(
      async () => ((await lakeKeysOf(root.orgId)).some((key) => !rootKeys.has(key)) ? true : undefined),
      60_000,
    );
    expect(await lakeKeysOf(orgId)).toEqual([]);
    // The web app serves nothing of it any more (with a frontend domain, its DNS record is removed too).
    expect([await webApp('/'), await webApp('/favicon.ico')]).toEqual([404, 404]);
    // Every capability's data and a run of each of its workers: more than the default minute on a busy machine.
  }, 180_000);
});
