/** What other capabilities may use of tool's records; everything else stays behind its domain functions. */
export { toolLakeSources } from './lake-sources';
export { ensureLocalRepository, repositoryName } from './source-repository';
