import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleStateMachineVersion } from '#shared/state-machine/fixtures';
import type { RecordedRequest } from '../../support/twilio-rest-stand-in';
import { api, apiUrl, expectStatus } from '../support/client';
import { createService, interact } from '../support/conversations';
import {
  createOrganization,
  createUserSession,
  organizationKey,
  rootSession,
  type Session,
  signIn,
} from '../support/identity';
import {
  createTwilioNumber,
  newPhoneNumber,
  newTwilioAccount,
  postTwilioCallback,
  type TwilioAccount,
  twilioRestRequests,
} from '../support/twilio';

/**
 * The agent hands over to a person (docs/handover.md): its state's `transfer`. In a phone call the
 * turn finishes the conversation as transferred; once the voice session has spoken the agent's
 * words and closed the media stream, Twilio asks the `<Connect>` action what next, and is told to
 * `<Dial>` the person. Twilio's side is played here: its REST API by the stand-in, its requests
 * signed with the number's auth token. Outside a call, the conversation is escalated to an operator.
 */

let admin: Session;
let account: TwilioAccount;
let number: { id: string; phoneNumber: string };
const person = newPhoneNumber();
const summary = 'A question about a bill.';
const placed: { sid: string; to: string }[] = [];

/** The sample machine, its opening state handing the user to `person` (warm). */
const handingOverMachine = () => {
  const machine = sampleStateMachineVersion();
  return {
    ...machine,
    states: machine.states.map((state) =>
      state.name === 'greet' ? { ...state, transfer: { phone_to: person, mode: 'warm' as const, summary } } : state,
    ),
  };
};

const callbackBase = () => apiUrl(`/v1/${admin.orgId}/call/twilio`);

/** The Calls.json request that placed the call. */
const creationOf = async (callSid: string): Promise<RecordedRequest> => {
  const found = (await twilioRestRequests(account.accountSid)).find(
    (request) => request.callSid === callSid && request.path.endsWith('/Calls.json'),
  );
  if (!found) throw new Error(`no Calls.json request made ${callSid}`);
  return found;
};

/** Twilio's form about the placed call, signed and posted to `url`. */
const postAboutCall = async (url: string, sid: string, fields: Record<string, string> = {}) => {
  const created = await creationOf(sid);
  return postTwilioCallback(
    url,
    {
      AccountSid: account.accountSid,
      ApiVersion: '2010-04-01',
      CallSid: sid,
      CallStatus: 'in-progress',
      Direction: 'outbound-api',
      From: String(created.form.From),
      To: String(created.form.To),
      ...fields,
    },
    account.authToken,
  );
};

/** An outbound call placed and answered (its status callback says in-progress): its SID, id, conversation and callee. */
const answeredCall = async () => {
  const to = newPhoneNumber();
  const answer = await api(`/v1/${admin.orgId}/call/outbound`, {
    token: admin.token,
    body: { phone_to: to, phone_from: number.phoneNumber, reason: 'billing_follow_up' },
  });
  expectStatus('place call', answer, 201);
  const sid = answer.body.call_sid as string;
  placed.push({ sid, to });
  const created = await creationOf(sid);
  expect((await postAboutCall(String(created.form.StatusCallback), sid)).status).toBe(204);
  const call = await api(`/v1/${admin.orgId}/call/${sid}`, { token: admin.token });
  return { sid, id: call.body.id as string, conversationId: answer.body.conversation_id as string, to };
};

/** The callee's user, signed in as the voice session acts for them (an organization key may act as any user). */
const calleeSession = async (to: string): Promise<Session> => {
  const users = await api(`/v1/${admin.orgId}/user/`, { token: admin.token, query: { email: `${to}@phone.invalid` } });
  const key = organizationKey(admin.orgId);
  return signIn(admin.orgId, key.api_key_id, key.api_key, users.body.users[0].user_id as string);
};

/** What Twilio is told to do once the call's media stream ended (its `<Connect>` action). */
const askWhatNext = (call: { sid: string; id: string }) =>
  postAboutCall(`${callbackBase()}/continue?call_id=${call.id}`, call.sid);

const conversationOf = async (conversationId: string) =>
  (await api(`/v1/${admin.orgId}/conversation/`, { token: admin.token, query: { id: conversationId } })).body
    .conversations[0];

beforeAll(async () => {
  ({ session: admin } = await createOrganization(await rootSession()));
  const { serviceId } = await createService(admin, handingOverMachine());
  account = newTwilioAccount();
  number = await createTwilioNumber(admin, serviceId, account);
});

afterAll(async () => {
  for (const { sid } of placed.splice(0)) {
    const created = await creationOf(sid);
    await postAboutCall(String(created.form.StatusCallback), sid, { CallStatus: 'completed' });
  }
});

describe('twilio-call-continue', () => {
  it('dials the person the agent handed the call to once its stream ended, warm, and the conversation finished as transferred', async () => {
    // Prepare
    const call = await answeredCall();
    const callee = await calleeSession(call.to);

    // Act: the callee speaks; the agent, in its handing-over state, answers and completes the conversation.
    const turn = await interact(callee, call.conversationId, 'Hello?');
    const next = await askWhatNext(call);
    const again = await askWhatNext(call);

    // Assess
    const complete = turn.events.find((event) => event.type === 'interaction-complete');
    expect(complete?.conversation_completed).toBe(true);
    expect(next.status, next.text).toBe(200);
    const whisper = `${callbackBase()}/whisper?call_id=${call.id}`;
    expect(next.text).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="${number.phoneNumber}"><Number url="${whisper}">${person}</Number></Dial></Response>`,
    );
    // Twilio asking again (a retry) dials no one twice.
    expect(again.text).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>');
    const record = await api(`/v1/${admin.orgId}/call/${call.sid}`, { token: admin.token });
    expect(record.body.transfer).toMatchObject({ phone_to: person, mode: 'warm', summary, requested_by: 'agent' });
    const timeline = await api(`/v1/${admin.orgId}/call/${call.sid}/timeline`, { token: admin.token });
    expect(timeline.body.entries).toEqual([
      expect.objectContaining({ kind: 'transfer', text: `warm transfer to ${person}` }),
    ]);
    const heard = await postAboutCall(whisper, call.sid, { ParentCallSid: call.sid, CallSid: `CA${'2'.repeat(32)}` });
    expect(heard.text).toContain(`<Say>${summary}</Say>`);
    // Operators see it: on the conversation, and in its audit trail.
    const conversation = await conversationOf(call.conversationId);
    expect(conversation.is_finished).toBe(true);
    expect(conversation.operator_control.handover).toMatchObject({
      phone_to: person,
      mode: 'warm',
      state_name: 'greet',
    });
    const actions = await api(`/v1/${admin.orgId}/conversation/${call.conversationId}/operator/actions`, {
      token: admin.token,
    });
    expect(actions.body.actions).toEqual([
      expect.objectContaining({
        action: 'transferred',
        actor_name: 'Agent',
        text: `${person} (warm transfer), from state greet`,
      }),
    ]);
  });

  it('hangs up a call whose agent handed nothing over, and refuses a request Twilio did not sign', async () => {
    // Prepare
    const call = await answeredCall();

    // Act
    const next = await askWhatNext(call);
    const forged = await postTwilioCallback(
      `${callbackBase()}/continue?call_id=${call.id}`,
      { AccountSid: account.accountSid, CallSid: call.sid },
      'not-the-auth-token',
    );

    // Assess
    expect(next.status, next.text).toBe(200);
    expect(next.text).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>');
    expect(forged.status).toBe(403);
    expect((await api(`/v1/${admin.orgId}/call/${call.sid}`, { token: admin.token })).body.transfer).toBeNull();
  });
});

describe('interact-with-conversation', () => {
  it('escalates a conversation outside a phone call to an operator instead, naming the person, and goes on', async () => {
    // Prepare
    const user = await createUserSession(admin, 'DefaultUserRole');
    const { serviceId } = await createService(admin, handingOverMachine());

    // Act
    const started = await api(`/v1/${admin.orgId}/conversation/`, {
      token: user.token,
      body: { service_id: serviceId },
      query: { response_format: 'text' },
    });

    // Assess
    expect(started.status, started.text).toBe(201);
    const conversationId = /"conversation_id":\s*"([a-f0-9]{24})"/.exec(started.text)?.[1] as string;
    const conversation = await conversationOf(conversationId);
    expect(conversation.is_finished).toBe(false);
    expect(conversation.operator_control).toMatchObject({
      control: 'pending_operator',
      handover: null,
      escalation: {
        triggered_by: 'agent',
        reason: `The agent hands the user to a person: ${person} (warm transfer). ${summary}`,
      },
    });
  });
});

describe('create-dynamic-behavior-set', () => {
  it("keeps an inject-instruction's transfer as given, and answers 422 to one whose phone_to is not E.164", async () => {
    // Prepare
    const body = (phoneTo: string) => ({
      name: `Handover ${phoneTo}`,
      tags: {},
      applied_to_services: [],
      initial_version: {
        is_active: true,
        conversation_triggers: ['The caller asks for a person'],
        action: {
          type: 'inject-instruction',
          instruction: 'Tell the caller you are putting them through.',
          overrides_instructions: false,
          transfer: { phone_to: phoneTo, mode: 'cold' },
        },
      },
    });

    // Act
    const created = await api(`/v1/${admin.orgId}/dynamic_behavior_set/`, { token: admin.token, body: body(person) });
    const refused = await api(`/v1/${admin.orgId}/dynamic_behavior_set/`, {
      token: admin.token,
      body: body('555-0100'),
    });

    // Assess
    expect(created.status, created.text).toBe(201);
    const versions = await api(
      `/v1/${admin.orgId}/dynamic_behavior_set/${created.body.dynamic_behavior_set_id}/version/`,
      { token: admin.token },
    );
    expect(versions.body.dynamic_behavior_set_versions[0].actions[0].transfer).toEqual({
      phone_to: person,
      mode: 'cold',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].loc).toEqual(['body', 'initial_version', 'action', 'transfer', 'phone_to']);
  });
});
