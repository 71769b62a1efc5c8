import { describe, expect, it } from 'vitest';
import type { StoredService } from './schemas';
import { withRevisions } from './version-set-revisions';
import { edgeVersionSet } from './version-sets';

const pinned = (agent: number) => ({
  agent_version_number: agent,
  service_hierarchical_state_machine_version_number: 1,
  llm_model_preferences: { default: { llm_name: 'builtin', params: { a: 1, b: 2 } } },
});

const service = (sets: StoredService['version_sets'], revisions: Record<string, number> = {}): StoredService => ({
  id: '0123456789abcdef01234567',
  name: 'Support',
  description: 'Helps.',
  is_active: true,
  agent_id: 'a',
  service_hierarchical_state_machine_id: 'm',
  tags: {},
  keyterms: [],
  version_sets: { edge: edgeVersionSet(), ...sets },
  version_set_revisions: revisions,
  creator: { org_id: 'o', user_id: 'u' },
  updated_by: { org_id: 'o', user_id: 'v' },
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-02T00:00:00.000Z',
  revision: 3,
});

describe('withRevisions', () => {
  it('records a revision for each changed set, numbered on from the last, and none for edge or unchanged sets', () => {
    // Prepare
    const current = service({ release: pinned(1), staging: pinned(2), old: pinned(1) }, { release: 4, old: 1 });
    const next = service({ release: pinned(2), staging: pinned(2), fresh: pinned(1) }, { release: 4, old: 1 });

    // Act
    const { service: saved, revisions, companions } = withRevisions('org', current, next);

    // Assess
    expect(revisions.map((revision) => [revision.version_set_name, revision.revision, revision.change])).toEqual([
      ['fresh', 1, 'created'],
      ['old', 2, 'deleted'],
      ['release', 5, 'updated'],
    ]);
    expect(saved.version_set_revisions).toEqual({ release: 5, old: 2, fresh: 1 });
    expect(revisions[2]).toMatchObject({
      before: pinned(1),
      after: pinned(2),
      changed_by: { user_id: 'v' },
      changed_at: '2026-01-02T00:00:00.000Z',
    });
    expect(companions).toHaveLength(3);
  });

  it('treats sets equal but for key order as unchanged, and names what made a promotion', () => {
    // Prepare
    const reordered = {
      llm_model_preferences: { default: { params: { b: 2, a: 1 }, llm_name: 'builtin' } },
      service_hierarchical_state_machine_version_number: 1,
      agent_version_number: 1,
    };
    const current = service({ release: pinned(1) }, { release: 1 });

    // Act
    const same = withRevisions('org', current, service({ release: reordered }, { release: 1 }));
    const promoted = withRevisions('org', current, service({ release: pinned(3) }, { release: 1 }), {
      change: 'promoted',
      promotionId: 'p',
      runId: 'r',
    });

    // Assess
    expect(same.revisions).toEqual([]);
    expect(promoted.revisions[0]).toMatchObject({
      revision: 2,
      change: 'promoted',
      promotion_id: 'p',
      simulation_unit_test_set_run_id: 'r',
    });
  });
});
