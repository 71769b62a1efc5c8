import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { type Paged, pageOf } from '../data/paging';
import { countOneLess, countOneMore, defineRecordCount } from '../data/record-count';
import { failedConditions, getItem, queryPage, transactWrite } from '../data/table';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors';
import { creatorInfo } from '../kernel/schemas';

/**
 * An organization's phone numbers. The provider's auth token is stored sealed
 * (`shared/auth/secret-box.ts`, bound to the number's record), never in clear. A guard item per
 * number makes it unique in the organization and finds it from a webhook's `To`; a counter
 * beside the numbers keeps concurrent creations under the organization's maximum.
 */
const phoneNumberRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  phone_number: z.string(),
  service_id: z.string(),
  provider: z.literal('twilio'),
  twilio_account_sid: z.string(),
  sealed_auth_token: z.string(),
  /** Whether its calls are recorded; numbers made before recordings have none: recorded. */
  recording: z.boolean().optional(),
  recording_announcement: z.string().optional(),
  creator: creatorInfo,
  created_at: z.string(),
});
export type PhoneNumberRecord = z.infer<typeof phoneNumberRecord>;

export const phoneNumbers = defineEntity({
  name: 'phone-number',
  token: 'PHONE',
  schema: phoneNumberRecord,
  sortPrefix: 'NUM#',
  sort: (number: { id: string }) => number.id,
  guards: {
    e164: {
      token: 'PHONENUM',
      value: (number) => number.phone_number,
      holds: (number) => ({ phone_number_id: number.id }),
    },
  },
});

/** How many numbers the organization has, beside them. */
export const phoneNumberCounts = defineRecordCount('phone-number-counter', phoneNumbers, 'number_count');

const missing = (id: string) => new NotFoundError(`Phone number ${id} not found.`);

export const getPhoneNumber = (orgId: string, id: string): Promise<PhoneNumberRecord | undefined> =>
  phoneNumbers.get(orgId, { id }, true);

/** The number of the organization with this E.164 value, found through its guard. */
export const findPhoneNumber = async (orgId: string, phoneNumber: string): Promise<PhoneNumberRecord | undefined> => {
  const guard = await getItem(phoneNumbers.guardKey(orgId, 'e164', phoneNumber));
  const id = guard?.phone_number_id;
  return typeof id === 'string' ? getPhoneNumber(orgId, id) : undefined;
};

/** One page of the organization's numbers, oldest first. */
export const queryPhoneNumbers = (
  orgId: string,
  page: { limit: number; continuationToken: number },
): Promise<Paged<PhoneNumberRecord>> =>
  pageOf(
    orgId,
    () => 'phone-numbers',
    page.continuationToken,
    (startKey) => queryPage(phoneNumbers.query(orgId, {}), { limit: page.limit, startKey }),
    phoneNumbers.parse,
  );

export const insertPhoneNumber = async (record: PhoneNumberRecord, max: number): Promise<void> => {
  await transactWrite(
    [
      countOneMore(phoneNumberCounts.of(record.org_id), max),
      phoneNumbers.create(record.org_id, record),
      phoneNumbers.guardPut(record.org_id, 'e164', record),
    ],
    (error) =>
      failedConditions(error).includes(0)
        ? new BadRequestError(`The organization already has the maximum of ${max} phone numbers.`)
        : new ConflictError(`The phone number ${record.phone_number} is already registered in this organization.`),
  );
};

export const removePhoneNumber = async (number: PhoneNumberRecord): Promise<void> => {
  await transactWrite(
    [
      {
        Delete: {
          Key: phoneNumbers.key(number.org_id, { id: number.id }),
          ConditionExpression: 'attribute_exists(pk)',
        },
      },
      { Delete: { Key: phoneNumbers.guardKey(number.org_id, 'e164', number.phone_number) } },
      countOneLess(phoneNumberCounts.of(number.org_id)),
    ],
    () => missing(number.id),
  );
};
