import { transactWrite } from '../data/table';
import { ConflictError } from '../kernel/errors';
import { phoneCallerDomain } from '../kernel/phone-callers';
import type { OrganizationRecord } from '../organization/schemas';
import { getUser, getUserIdByEmail, userCreateItems } from '../user/index';
import { newUserRecord } from '../user/users';
import { e164Number } from './schemas';

/**
 * Who calls: a caller's number is a user of the organization, created on their first call and
 * found again by the next (the user's e-mail guard is the index: `+14155550100@phone.invalid`, an
 * address that takes no mail, so the user cannot sign in). A withheld or unusable caller ID
 * (`anonymous`, a SIP address) gets a user of its own per call, so two such callers never share
 * one user's conversation. Caller ID is a claim anyone can make: a user is created verified only
 * when the carrier attested the number (STIR/SHAKEN's `A`). The address's domain is the kernel's
 * (`phoneCallerDomain`): a turn knows by it that its caller talks through a call.
 */

/** The role a caller's user is created with. */
export const callerRoleName = 'DefaultUserRole';

const callerEmail = (from: string, callSid: string): string =>
  e164Number.safeParse(from).success
    ? `${from}@${phoneCallerDomain}`
    : `call-${callSid.toLowerCase()}@${phoneCallerDomain}`;

/**
 * The user id of the caller, creating the user on the number's first call. A verified user (their
 * number attested once) is never what an unattested call acts as: anyone can claim their number,
 * so such a call gets a user of its own, as a withheld caller ID does.
 */
export const callerUserId = async (
  organization: OrganizationRecord,
  from: string,
  callSid: string,
  attested: boolean,
): Promise<string> => {
  const orgId = organization.org_id;
  const numbered = callerEmail(from, callSid);
  const owner = await getUserIdByEmail(orgId, numbered);
  const claimsOwner = owner !== undefined && !attested && (await getUser(orgId, owner))?.is_verified === true;
  if (owner && !claimsOwner) return owner;
  const email = claimsOwner ? callerEmail('', callSid) : numbered;
  const identified = !claimsOwner && e164Number.safeParse(from).success;
  const user = newUserRecord({
    orgId,
    firstName: identified ? from : 'Unknown caller',
    lastName: '',
    email,
    roleName: callerRoleName,
    // An attesting carrier vouches for the number as an e-mail link vouches for an address.
    verified: identified && attested,
    preferences: organization.default_user_preferences,
    nonsensitiveVariables: identified ? { phone_number: from } : {},
  });
  try {
    await transactWrite(userCreateItems(user));
    return user.user_id;
  } catch (error) {
    // A concurrent first call created them meanwhile.
    const created = error instanceof ConflictError ? await getUserIdByEmail(orgId, email) : undefined;
    if (!created) throw error;
    return created;
  }
};
