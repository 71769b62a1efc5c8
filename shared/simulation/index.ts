/** What other capabilities may use of simulation's records; everything else stays behind its domain functions. */
export { getRuns, listRunConversations } from './run-repository';
