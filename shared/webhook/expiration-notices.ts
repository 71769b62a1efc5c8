import { createHash } from 'node:crypto';
import { z } from 'zod';
import { queueWebhookEvent } from '../aws/queues';
import { defineEntity, type Entity } from '../data/entity';
import { deleteItem, putItem, queryPage } from '../data/table';
import { config } from '../kernel/config';
import { nowIso } from '../kernel/ids';
import { apiKeyPartition, queryApiKeys } from '../user/index';

/**
 * `api-key-expiration-soon`, sent once per API key expiring within 7 days by a daily schedule
 * (an EventBridge rule in AWS, a timer in the local platform).
 *
 * The schedule visits only organizations with webhook destinations, which a directory names:
 * one entry per such organization, kept in the root organization's partition because the
 * schedule reads across organizations and the table is never scanned. An organization's entry
 * holds nothing but its id and is erased with it. A notice record beside the key marks it as
 * announced, so a repeated or overlapping run announces no key twice.
 */
export const expirationNoticeWindowMs = 7 * 24 * 3600 * 1000;

const subscriberDirectory = defineEntity({
  name: 'webhook-subscriber',
  token: 'WHSUBSCRIBER',
  schema: z.object({ subscriber_org_id: z.string() }),
  sort: (entry: { subscriber_org_id: string }) => entry.subscriber_org_id,
});

/** The directory as the entity catalog erases it: an organization's entry lives in the root organization's partition. */
export const webhookSubscriberDirectory: Entity = {
  name: subscriberDirectory.name,
  erase: (orgId) => deleteItem(subscriberDirectory.key(config.rootOrganizationId, { subscriber_org_id: orgId })),
};

export const apiKeyExpirationNotices = defineEntity({
  name: 'api-key-expiration-notice',
  within: apiKeyPartition,
  schema: z.object({ api_key_id: z.string(), noticed_at: z.string() }),
  sortPrefix: 'EXPIRYNOTICE#',
  sort: (notice: { api_key_id: string }) => notice.api_key_id,
});

/** Lists the organization in the directory the schedule reads (idempotent). */
export const registerWebhookSubscriber = (orgId: string): Promise<void> =>
  putItem(subscriberDirectory.item(config.rootOrganizationId, { subscriber_org_id: orgId }));

/** Marks the key as announced; false when it already was. */
const claimNotice = async (orgId: string, apiKeyId: string): Promise<boolean> => {
  try {
    await putItem(apiKeyExpirationNotices.item(orgId, { api_key_id: apiKeyId, noticed_at: nowIso() }), {
      ifNotExists: () => new Error('noticed'),
    });
    return true;
  } catch (error) {
    if ((error as Error).message === 'noticed') return false;
    throw error;
  }
};

/** The event id of a key's notice: the same on every run, so the webhook worker delivers it once. */
const noticeEventId = (orgId: string, apiKeyId: string): string =>
  createHash('sha256').update(`api-key-expiration-soon\u0000${orgId}\u0000${apiKeyId}`).digest('hex').slice(0, 24);

const announceExpiringKeys = async (orgId: string, now: number): Promise<number> => {
  let announced = 0;
  for (const key of await queryApiKeys(orgId)) {
    const expiresAt = Date.parse(key.expires_at);
    if (expiresAt <= now || expiresAt - now > expirationNoticeWindowMs) continue;
    if (await apiKeyExpirationNotices.get(orgId, { api_key_id: key.id })) continue;
    // Queued before the notice is claimed: a run stopped in between queues it again, under the same event id.
    await queueWebhookEvent({
      type: 'api-key-expiration-soon',
      id: noticeEventId(orgId, key.id),
      org_id: orgId,
      api_key_id: key.id,
      api_key_name: key.name,
      expires_at: key.expires_at,
    });
    if (await claimNotice(orgId, key.id)) announced += 1;
  }
  return announced;
};

/** The daily run: every subscribing organization's keys expiring within 7 days, announced once each. */
export const announceExpiringApiKeys = async (
  now = Date.now(),
): Promise<{ organizations: number; announced: number }> => {
  let organizations = 0;
  let announced = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await queryPage(subscriberDirectory.query(config.rootOrganizationId, {}), { limit: 100, startKey });
    for (const entry of page.items.map(subscriberDirectory.parse)) {
      organizations += 1;
      announced += await announceExpiringKeys(entry.subscriber_org_id, now);
    }
    startKey = page.nextKey;
  } while (startKey);
  return { organizations, announced };
};
