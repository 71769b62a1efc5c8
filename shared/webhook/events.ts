import { createHash } from 'node:crypto';
import type { FrameworkResourceType, VersionSetPromotionCompletedMessage } from '../../events/queue-messages';
import { logger } from '../aws/observability';
import { queueWebhookEvent } from '../aws/queues';
import { newId, nowIso } from '../kernel/ids';

export interface FrameworkResourceChange {
  resourceType: FrameworkResourceType;
  resourceId: string;
  change: 'created' | 'updated' | 'deleted';
  /** The version the change created, for versioned resources. */
  version?: number;
}

/**
 * Announces a committed change of an agent, state machine, service, tool or dynamic behavior
 * set to the organization's webhook destinations (`agent-framework-resource-updated`). Call it
 * after the change is stored. The change stands whatever happens here, so a failure to queue
 * the announcement is logged (and alarmed through the error logs), never turned into an error
 * response for a write that succeeded.
 */
export const announceFrameworkResourceChange = async (
  orgId: string,
  change: FrameworkResourceChange,
): Promise<void> => {
  try {
    await queueWebhookEvent({
      type: 'agent-framework-resource-updated',
      id: newId(),
      org_id: orgId,
      resource_type: change.resourceType,
      resource_id: change.resourceId,
      change: change.change,
      version: change.version ?? null,
      updated_at: nowIso(),
    });
  } catch (error) {
    logger.error('could not queue an agent-framework-resource-updated webhook event', {
      error: error as Error,
      resource_type: change.resourceType,
      resource_id: change.resourceId,
    });
  }
};

/**
 * Announces the end of a version set promotion (`version-set-promotion-completed`). The event's
 * id derives from the promotion, so announcing it again (a redelivered worker message) sends a
 * duplicate the webhook worker drops. A failure to queue is logged, as for resource changes.
 */
export const announcePromotionCompleted = async (
  event: Omit<VersionSetPromotionCompletedMessage, 'type' | 'id'>,
): Promise<void> => {
  try {
    await queueWebhookEvent({
      type: 'version-set-promotion-completed',
      id: createHash('sha256')
        .update(`${event.org_id}\u0000promotion\u0000${event.promotion_id}`)
        .digest('hex')
        .slice(0, 24),
      ...event,
    });
  } catch (error) {
    logger.error('could not queue a version-set-promotion-completed webhook event', {
      error: error as Error,
      promotion_id: event.promotion_id,
    });
  }
};
