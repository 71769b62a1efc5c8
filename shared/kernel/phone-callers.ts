import type { Caller } from './caller';

/**
 * Callers' users: a phone number that calls (or is called) is a user of the organization whose
 * e-mail is the number at this domain (`+14155550100@phone.invalid`), an address that takes no
 * mail, so the user cannot sign in (`shared/phone-number/callers.ts` makes them).
 */
export const phoneCallerDomain = 'phone.invalid';

/**
 * Whether the caller talks through a phone call: a caller's user acts only in the voice session of
 * its call (an administrator may sign in as one with an organization key, to test).
 */
export const talksByPhone = (caller: Pick<Caller, 'email'>): boolean => caller.email.endsWith(`@${phoneCallerDomain}`);
