import { z } from 'zod';
import { creatorInfo } from '../kernel/schemas';

/** The head of a versioned record (`versioned-entity.ts`) as stored: a pure shape, which the lake's projections read too. */
export const versionedHead = z.object({
  id: z.string(),
  name: z.string(),
  deprecated: z.boolean(),
  latest_version: z
    .number()
    .int()
    .nullish()
    .transform((value) => value ?? null),
  created_at: z.string(),
  creator: creatorInfo,
  /**
   * How many active services use the record, kept in the same transactions that activate,
   * deactivate or repoint a service; deprecation is conditioned on it being 0.
   */
  active_services: z
    .number()
    .int()
    .optional()
    .transform((count) => count ?? 0),
});
export type VersionedHead = z.infer<typeof versionedHead>;

/** The columns every versioned record's head gives its lake table (`lakeProjection`'s `fields`). */
export const versionedHeadColumns = {
  id: 'VARCHAR',
  name: 'VARCHAR',
  deprecated: 'BOOLEAN',
  latest_version: 'BIGINT',
  created_at: 'TIMESTAMPTZ',
} as const;
