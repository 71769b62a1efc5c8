import { queryPages } from '../data/table';
import { idBoundAt } from '../kernel/ids';
import { conversations } from './conversation-repository';
import type { ConversationRecord } from './schemas';

/** Conversations read for other capabilities' lists of them: by id, and a service's since a time. */

/** The conversations of `ids` that exist. */
export const getConversations = (orgId: string, ids: readonly string[]): Promise<ConversationRecord[]> =>
  conversations.getMany(
    orgId,
    ids.map((id) => ({ id })),
  );

/**
 * The service's conversations created since `since` that `keep` accepts, newest first: at most
 * `limit`, reading at most `maxRead` (a page of 100 at a time).
 */
export const serviceConversationsSince = async (
  orgId: string,
  serviceId: string,
  since: string,
  options: { keep: (conversation: ConversationRecord) => boolean; limit: number; maxRead: number },
): Promise<ConversationRecord[]> => {
  const kept: ConversationRecord[] = [];
  let read = 0;
  const spec = conversations.queryIndex(
    orgId,
    'byService',
    { service_id: serviceId },
    { between: [idBoundAt(new Date(since), 'first'), '~'], forward: false },
  );
  for await (const page of queryPages(spec, 100)) {
    for (const item of page) {
      const conversation = conversations.parse(item);
      if (options.keep(conversation)) kept.push(conversation);
    }
    read += page.length;
    if (kept.length >= options.limit || read >= options.maxRead) break;
  }
  return kept.slice(0, options.limit);
};
