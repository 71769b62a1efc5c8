/** What other capabilities may use of service's records; everything else stays behind its domain functions. */

export { serviceLakeSources } from './lake-sources';
export { claimVersionSet, getService, getServices } from './service-repository';
