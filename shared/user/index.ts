/** What other capabilities may use of user's records; everything else stays behind its domain functions. */
export { apiKeyPartition, getApiKey, queryApiKeys, removeApiKey } from './api-key-repository';
export { userLakeSources } from './lake-sources';
export { conversationMemories, memoryPut, recentMemories } from './memory-repository';
export type { UserRecord } from './schemas';
export { activeGrantsOf } from './temporary-grant-repository';
export { getUserModels, userModelsPut } from './user-model-repository';
export {
  createUser,
  getUser,
  getUserIdByEmail,
  removeUser,
  userCreateItems,
  userSortFields,
} from './user-repository';
