import { openSecret } from '../auth/secret-box';
import type { PhoneNumberRecord } from './phone-number-repository';
import { authTokenContext } from './phone-numbers';

/** The number's Twilio account and its auth token, opened for a request to Twilio's REST API (never logged). */
export const twilioCredentialsOf = async (
  number: PhoneNumberRecord,
): Promise<{ accountSid: string; authToken: string }> => ({
  accountSid: number.twilio_account_sid,
  authToken: await openSecret(authTokenContext(number.org_id, number.id), number.sealed_auth_token),
});
