/** What other capabilities may use of service's records; everything else stays behind its domain functions. */
export { claimVersionSet, getService, services } from './service-repository';
