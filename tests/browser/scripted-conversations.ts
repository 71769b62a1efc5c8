import { toolCallStateMachineVersion } from '#shared/conversation/fixtures';
import { encodeWav } from '#shared/speech/audio';
import { api, eventually, expectStatus, streamEvents } from '../integration/support/client';
import { createService, interact, startConversation } from '../integration/support/conversations';
import { createUserSession, type Session } from '../integration/support/identity';
import { createTool, publishAndDeploy } from '../integration/support/tools';
import { spokenEnglish } from '../support/spoken-english';

/**
 * What the console's pages are looked at with: conversations a script holds through the API, as
 * people would. A text conversation of three turns whose second calls a tool; a voice one
 * (recorded audio in, spoken MP3 out); one the user escalates, an operator takes over, answers and
 * hands back. All three finish, so the metric applied to their services is evaluated. Two more
 * stay open in the operators' queue: one the user escalated that awaits an operator, and one an
 * operator holds.
 */
export interface ScriptedConversations {
  serviceId: string;
  toolServiceId: string;
  toolName: string;
  metricName: string;
  /** The user who held them: Ada Lovelace. */
  user: Session & { email: string };
  /** The operator who took the escalated one over: Grace Hopper, an administrator. */
  operator: Session & { email: string };
  text: string;
  voice: string;
  escalated: string;
  /** Open, escalated by the user, awaiting an operator. */
  awaiting: string;
  /** Open, escalated and held by Grace Hopper. */
  held: string;
}

/** A spoken sentence as a microphone records it: eSpeak NG's voice as WAV. */
export const spokenSentence = async (text: string): Promise<Uint8Array> => {
  return new Uint8Array(encodeWav(await spokenEnglish(text)));
};

const finish = async (session: Session, conversationId: string) =>
  expectStatus(
    'finish conversation',
    await api(`/v1/${session.orgId}/conversation/${conversationId}/finish/`, { method: 'POST', token: session.token }),
    204,
  );

const operatorAction = (session: Session, conversationId: string, action: string, body?: unknown) =>
  api(`/v1/${session.orgId}/conversation/${conversationId}/operator/${action}`, {
    method: 'POST',
    token: session.token,
    ...(body === undefined ? {} : { body }),
  });

export const scriptConversations = async (admin: Session): Promise<ScriptedConversations> => {
  const toolName = `greeting_${Date.now()}`;
  const toolId = await createTool(admin, { name: toolName });
  await publishAndDeploy(admin, toolId, 'samples/greeting');
  const [{ serviceId }, { serviceId: toolServiceId }, user, operator] = await Promise.all([
    createService(admin),
    createService(admin, toolCallStateMachineVersion(toolId)),
    createUserSession(admin, 'DefaultUserRole', { first_name: 'Ada', last_name: 'Lovelace' }),
    createUserSession(admin, 'DefaultAdministratorRole', { first_name: 'Grace', last_name: 'Hopper' }),
  ]);
  const metricName = 'Problem solved';
  expectStatus(
    'create metric',
    await api(`/v1/${admin.orgId}/metric/`, {
      token: admin.token,
      body: {
        name: metricName,
        description: 'Whether the user’s problem was solved.',
        metric_value: { type: 'boolean' },
        applied_to_services: [serviceId, toolServiceId],
      },
    }),
    201,
  );

  // Text: three turns, the second calling the tool.
  const text = (await startConversation(user, { service_id: toolServiceId })).conversationId;
  for (const said of ['I need help with my printer', 'I said goodbye', 'Thank you, that is all'])
    await interact(user, text, said);
  await finish(user, text);

  // Voice: the user's recording in, the agent's reply spoken as MP3 (both kept as the messages' audio).
  const voice = (await startConversation(user, { service_id: serviceId })).conversationId;
  const spoken = await streamEvents(`/v1/${admin.orgId}/conversation/${voice}/interact`, {
    method: 'POST',
    token: user.token,
    raw: await spokenSentence('I need help with my printer'),
    headers: { 'content-type': 'audio/wav' },
    query: { request_format: 'voice', response_format: 'voice', audio_format: 'mp3' },
  });
  expectStatus('voice turn', spoken, 200);
  await finish(user, voice);

  // Escalated: the user asks for a person; Grace takes over, answers and hands back; the agent answers again.
  const escalated = (await startConversation(user, { service_id: serviceId })).conversationId;
  expectStatus(
    'escalate',
    await operatorAction(user, escalated, 'escalate', { reason: 'The user asks for a person.' }),
    200,
  );
  expectStatus('take over', await operatorAction(operator, escalated, 'take_over'), 200);
  const waiting = interact(user, escalated, 'Is a person there?');
  await eventually(async () => {
    const listed = await api(`/v1/${admin.orgId}/conversation/${escalated}/messages/`, { token: operator.token });
    return listed.body.messages?.some((message: { message: string }) => message.message === 'Is a person there?')
      ? true
      : undefined;
  });
  expectStatus(
    'operator message',
    await operatorAction(operator, escalated, 'messages', { message: 'Yes, Grace here. Open tray 2, please.' }),
    200,
  );
  await waiting;
  expectStatus(
    'hand back',
    await operatorAction(operator, escalated, 'hand_back', { outcome: 'resolved', note: 'Cleared the paper jam.' }),
    200,
  );
  await interact(user, escalated, 'Thanks, it prints again');
  await finish(user, escalated);

  // Open in the queue (a user holds one open conversation per service): one awaiting an operator, one Grace holds.
  const openEscalated = async (service_id: string, said: string): Promise<string> => {
    const id = (await startConversation(user, { service_id })).conversationId;
    await interact(user, id, said);
    expectStatus(
      'escalate',
      await operatorAction(user, id, 'escalate', { reason: 'The user asks for a person.' }),
      200,
    );
    return id;
  };
  const awaiting = await openEscalated(serviceId, 'My order never came');
  const held = await openEscalated(toolServiceId, 'I was charged twice');
  expectStatus('take over', await operatorAction(operator, held, 'take_over'), 200);

  return { serviceId, toolServiceId, toolName, metricName, user, operator, text, voice, escalated, awaiting, held };
};

/**
 * Waits until the organization's lake, fed by the table's stream, holds what the script made: the
 * finished conversations' metric results and the three escalations.
 */
export const untilTheLakeHolds = async (orgId: string, admin: Session): Promise<void> => {
  await eventually(
    async () => {
      const answer = await api(`/v1/${orgId}/admin/sql_query`, {
        token: admin.token,
        body: {
          sql_query:
            'SELECT (SELECT count(*) FROM metric_evaluation_results), (SELECT count(*) FROM conversations WHERE escalation_count > 0)',
          async_query: false,
        },
      });
      const [results, escalated] = (answer.body.result?.[0] ?? []) as string[];
      return Number(results) >= 3 && Number(escalated) === 3 ? true : undefined;
    },
    90_000,
    1_000,
  );
};
