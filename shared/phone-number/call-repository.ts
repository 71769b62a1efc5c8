import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { ConflictError } from '../kernel/errors';

/**
 * The calls the voice webhook answered, one per `CallSid`: a call is answered once, so a replayed
 * webhook (its signature never expires) connects nothing; and its media stream is opened once, so
 * the call's token, signed into the stream's URL, serves one socket.
 */
export const twilioCalls = defineEntity({
  name: 'twilio-call',
  token: 'TWCALL',
  schema: z.object({
    call_sid: z.string(),
    phone_number_id: z.string(),
    answered_at: z.string(),
    stream_opened_at: z.string().optional(),
    expires_at_epoch: z.number().int(),
  }),
  sort: (of: { call_sid: string }) => of.call_sid,
});

/** A call's record outlives any replay worth refusing: Twilio's calls last hours at most. */
const callLifetimeSeconds = 30 * 24 * 60 * 60;

/** Records the call as answered; 409 when it already was (a replayed webhook). */
export const insertTwilioCall = (orgId: string, callSid: string, phoneNumberId: string): Promise<void> =>
  twilioCalls.put(
    orgId,
    {
      call_sid: callSid,
      phone_number_id: phoneNumberId,
      answered_at: new Date().toISOString(),
      expires_at_epoch: Math.ceil(Date.now() / 1000) + callLifetimeSeconds,
    },
    { ifNotExists: () => new ConflictError(`Call ${callSid} was already answered.`) },
  );

/** Marks the call's media stream opened; `refused` when it already was, or the call was never answered. */
export const takeCallStream = async (orgId: string, callSid: string, refused: () => Error): Promise<void> => {
  await twilioCalls.update(
    orgId,
    { call_sid: callSid },
    {
      UpdateExpression: 'SET stream_opened_at = :now',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(stream_opened_at)',
      ExpressionAttributeValues: { ':now': new Date().toISOString() },
    },
    refused,
  );
};
