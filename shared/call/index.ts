/** What other layers may use of call's records; everything else stays behind its domain functions. */
export { callLakeSources } from './lake-sources';
