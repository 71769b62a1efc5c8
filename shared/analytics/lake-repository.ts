import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { type LeaseGrant, leaseFields, takeLease } from '../data/lease';

/**
 * The analytics lake's one record in the table: an organization's compaction lease
 * (`shared/data/lease.ts`), so that one compaction at a time rewrites its files (the schedule, a
 * backfill, the bench). A compaction that dies holding it frees it when it runs out. Like the
 * organization it guards, it has no TTL (its fencing token keeps growing); it goes with the
 * organization's erasure.
 *
 *   lease  LAKE  COMPACTION
 */
export const lakeCompactionLeases = defineEntity({
  name: 'lake-compaction-lease',
  token: 'LAKE',
  schema: z.object(leaseFields),
  sort: () => 'COMPACTION',
});

/** Takes the organization's compaction lease for `durationMs`; undefined while another compaction holds it. */
export const takeCompactionLease = async (orgId: string, durationMs: number): Promise<LeaseGrant | undefined> =>
  (
    await takeLease(lakeCompactionLeases.key(orgId, {}), {
      durationMs,
      setIfAbsent: { entity: lakeCompactionLeases.name },
    })
  )?.grant;
