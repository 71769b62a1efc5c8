import type { StoredService, VersionSetRecord, VersionSetRevisionRecord } from './schemas';
import type { CompanionWrite } from './service-repository';
import { StaleServiceError } from './service-repository';
import { versionSetRevisionPut } from './version-set-revision-repository';
import { EDGE } from './version-sets';

/** What made a change, when it is more than a PUT or a deletion. */
export interface RevisionContext {
  change: 'promoted' | 'rolled-back';
  promotionId?: string;
  runId?: string | null;
  rolledBackTo?: number | null;
}

/** JSON with keys sorted, so two equal version sets compare equal whatever order their keys were written in. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : inner,
  );

/** A version set's revision number: 0 before its first (the name may be any string, `toString` too). */
export const revisionOf = (service: StoredService, name: string): number =>
  Object.hasOwn(service.version_set_revisions, name) ? (service.version_set_revisions[name] ?? 0) : 0;

const setOf = (service: StoredService | undefined, name: string): VersionSetRecord | null =>
  service && Object.hasOwn(service.version_sets, name) ? (service.version_sets[name] ?? null) : null;

/**
 * `next` with the revision number of every version set that differs from `current` moved on
 * (edge, which never changes as stored, has no history), and the revisions to write in the same
 * transaction: who (`next.updated_by`), when, before, after, and what made the change.
 */
export const withRevisions = (
  orgId: string,
  current: StoredService | undefined,
  next: StoredService,
  context?: RevisionContext,
): { service: StoredService; revisions: VersionSetRevisionRecord[]; companions: CompanionWrite[] } => {
  const names = new Set([...Object.keys(current?.version_sets ?? {}), ...Object.keys(next.version_sets)]);
  names.delete(EDGE);
  const numbers = { ...(current?.version_set_revisions ?? {}), ...next.version_set_revisions };
  const revisions: VersionSetRevisionRecord[] = [];
  for (const name of [...names].sort()) {
    const before = setOf(current, name);
    const after = setOf(next, name);
    if (canonical(before) === canonical(after)) continue;
    const revision = (current ? revisionOf(current, name) : 0) + 1;
    numbers[name] = revision;
    revisions.push({
      service_id: next.id,
      version_set_name: name,
      revision,
      change: context?.change ?? (before === null ? 'created' : after === null ? 'deleted' : 'updated'),
      changed_at: next.updated_at,
      changed_by: next.updated_by,
      before,
      after,
      promotion_id: context?.promotionId ?? null,
      simulation_unit_test_set_run_id: context?.runId ?? null,
      rolled_back_to: context?.rolledBackTo ?? null,
    });
  }
  return {
    service: { ...next, version_set_revisions: numbers },
    revisions,
    // A taken number means another change got in first: the service write fails as stale too.
    companions: revisions.map((revision) => ({
      item: versionSetRevisionPut(orgId, revision),
      failure: () => new StaleServiceError(next.id),
    })),
  };
};
