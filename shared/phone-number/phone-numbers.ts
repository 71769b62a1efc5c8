import { sealSecret } from '../auth/secret-box';
import { pageBody } from '../data/paging';
import { type Caller, creatorOf } from '../kernel/caller';
import { NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { asIfMissing, filterPermitted, hasPermission, requirePermission } from '../kernel/permissions';
import { requireOrganization } from '../organization/index';
import { getService } from '../service/index';
import { serviceAttributes } from '../service/services';
import { callerRoleName } from './callers';
import {
  getPhoneNumber,
  insertPhoneNumber,
  type PhoneNumberRecord,
  queryPhoneNumbers,
  removePhoneNumber,
} from './phone-number-repository';
import { type CreatePhoneNumberRequest, maxPhoneNumbersPerOrganization, type PhoneNumberView } from './schemas';

/** The sealed auth token's context: the number's record, so the token opens nowhere else. */
export const authTokenContext = (orgId: string, phoneNumberId: string): string =>
  `phone-number/${orgId}/${phoneNumberId}`;

/** What permission grant conditions can name on a number. */
const numberAttributes = (number: Pick<PhoneNumberRecord, 'id' | 'phone_number' | 'service_id'>) => ({
  phone_number_id: number.id,
  phone_number: number.phone_number,
  service_id: number.service_id,
});

const missing = (id: string) => new NotFoundError(`Phone number ${id} not found.`);

/** Whether the number's calls are recorded (a number made before recordings is). */
export const isRecorded = (number: Pick<PhoneNumberRecord, 'recording'>): boolean => number.recording !== false;

export const phoneNumberView = (number: PhoneNumberRecord): PhoneNumberView => ({
  id: number.id,
  phone_number: number.phone_number,
  service_id: number.service_id,
  provider: number.provider,
  twilio_account_sid: number.twilio_account_sid,
  recording: isRecorded(number),
  recording_announcement: number.recording_announcement ?? null,
  creator: number.creator,
  created_at: number.created_at,
});

/** Registers a number of the organization for a service; the auth token is sealed before it is stored. */
export const createPhoneNumber = async (
  orgId: string,
  caller: Caller,
  body: CreatePhoneNumberRequest,
): Promise<{ id: string }> => {
  requirePermission(caller, 'PhoneNumber:CreatePhoneNumber', {
    phone_number: body.phone_number,
    service_id: body.service_id,
  });
  // A number makes its callers users of the organization: only a caller who may create users may map them.
  requirePermission(caller, 'User:InviteUser', { role_name: callerRoleName });
  await requireOrganization(orgId);
  // A service the caller may not see is answered as a missing one.
  const service = await getService(orgId, body.service_id);
  if (!service || !hasPermission(caller, 'Service:GetService', serviceAttributes(service))) {
    throw new NotFoundError(`Service ${body.service_id} not found.`);
  }
  const id = newId();
  await insertPhoneNumber(
    {
      id,
      org_id: orgId,
      phone_number: body.phone_number,
      service_id: body.service_id,
      provider: body.provider,
      twilio_account_sid: body.twilio_account_sid,
      sealed_auth_token: await sealSecret(authTokenContext(orgId, id), body.twilio_auth_token),
      recording: body.recording,
      ...(body.recording_announcement ? { recording_announcement: body.recording_announcement } : {}),
      creator: creatorOf(caller),
      created_at: nowIso(),
    },
    maxPhoneNumbersPerOrganization,
  );
  return { id };
};

/** A page of the numbers the caller may see (filtered: without the permission, none). */
export const listPhoneNumbers = async (
  orgId: string,
  caller: Caller,
  query: { limit: number; continuation_token: number },
) => {
  await requireOrganization(orgId);
  const page = await queryPhoneNumbers(orgId, { limit: query.limit, continuationToken: query.continuation_token });
  return pageBody('phone_numbers', {
    ...page,
    items: filterPermitted(caller, 'PhoneNumber:GetPhoneNumber', page.items, numberAttributes).map(phoneNumberView),
  });
};

/** Loads a number for an action, answering a caller who may not even read it as if it did not exist. */
const numberFor = async (
  orgId: string,
  id: string,
  caller: Caller,
  permission: 'PhoneNumber:GetPhoneNumber' | 'PhoneNumber:DeletePhoneNumber',
): Promise<PhoneNumberRecord> => {
  const number = await getPhoneNumber(orgId, id);
  if (!number) throw missing(id);
  const attributes = numberAttributes(number);
  asIfMissing(
    () => requirePermission(caller, permission, attributes),
    () => missing(id),
    () => hasPermission(caller, 'PhoneNumber:GetPhoneNumber', attributes),
  );
  return number;
};

export const getPhoneNumberDetails = async (orgId: string, caller: Caller, id: string): Promise<PhoneNumberView> =>
  phoneNumberView(await numberFor(orgId, id, caller, 'PhoneNumber:GetPhoneNumber'));

/** Deletes a number; its sealed token goes with its record, and the next call to it is refused. */
export const deletePhoneNumber = async (orgId: string, caller: Caller, id: string): Promise<void> => {
  await removePhoneNumber(await numberFor(orgId, id, caller, 'PhoneNumber:DeletePhoneNumber'));
};
