/** What other layers may use of phone-number's records; everything else stays behind its domain functions. */
export type { PhoneNumberRecord } from './phone-number-repository';
export { findPhoneNumber, getPhoneNumber } from './phone-number-repository';
