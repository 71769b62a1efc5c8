import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { config } from '#shared/kernel/config';
import { phoneNumberOperations } from '#shared/phone-number/operations';
import {
  createPhoneNumber,
  deletePhoneNumber,
  getPhoneNumberDetails,
  listPhoneNumbers,
} from '#shared/phone-number/phone-numbers';
import { answerTwilioCall } from '#shared/phone-number/twilio-calls';
import { addressedUrl, voiceSessionBase } from '#shared/phone-number/twilio-signature';

export const handler = httpHandler(
  implementGroup('phone-number', [phoneNumberOperations], {
    'create-phone-number': ({ path, body, caller }) => createPhoneNumber(path.organization, caller, body),
    'list-phone-numbers': ({ path, query, caller }) => listPhoneNumbers(path.organization, caller, query),
    'get-phone-number': ({ path, caller }) => getPhoneNumberDetails(path.organization, caller, path.phone_number_id),
    'delete-phone-number': ({ path, caller }) => deletePhoneNumber(path.organization, caller, path.phone_number_id),
    'twilio-voice-webhook': ({ path, headers, body, context }) => {
      const url = addressedUrl(context.url, headers['x-forwarded-host'], config.publicApiBaseUrl);
      return answerTwilioCall(
        path.organization,
        body,
        { url, signature: headers['x-twilio-signature'], form: new URLSearchParams(context.rawBody.toString('utf8')) },
        voiceSessionBase(url, config.voiceSessionUrl),
      );
    },
  }),
);
