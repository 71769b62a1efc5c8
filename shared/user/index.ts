/** What other capabilities may use of user's records; everything else stays behind its domain functions. */
export { apiKeys, getApiKey, queryApiKeys, removeApiKey } from './api-key-repository';
export { conversationMemories, memories, memoryPut, recentMemories } from './memory-repository';
export { activeGrantsOf } from './temporary-grant-repository';
export { getUserModels, userModelsPut } from './user-model-repository';
export {
  createUser,
  getUser,
  getUserIdByEmail,
  removeUser,
  type UserRecord,
  userCreateItems,
  userSortFields,
  users,
} from './user-repository';
