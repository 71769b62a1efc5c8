import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { heldLeaseAttributes, isLeaseHeld, storedLeaseOf } from '../data/lease';
import { ConflictError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { caller } from '../service/fixtures';
import { holdTool, releaseTool, requireHeld } from './tool-holds';
import { mutateTool, replaceTool, requireTool, type ToolRecord } from './tool-repository';
import { createTool } from './tools';

const orgId = 'org-holds';

const newTool = async (): Promise<ToolRecord> => {
  const { id } = await createTool(orgId, caller, { name: `tool-${newId()}`, description: '', tags: {} });
  return requireTool(orgId, id, true);
};

/** A publish's hold of the tool, as `publishToolVersion` takes it: its fencing token. */
const hold = async (tool: ToolRecord): Promise<number> => {
  let token = 0;
  await mutateTool(tool.org_id, tool.id, (current) => {
    const taken = holdTool(current);
    token = taken.token;
    return taken;
  });
  return token;
};

/** The hold runs out (20 minutes pass) without being given back. */
const runOut = (tool: ToolRecord) =>
  mutateTool(tool.org_id, tool.id, (current) => ({
    next: {
      ...current,
      ...heldLeaseAttributes({ token: storedLeaseOf(current).token, untilMs: Date.now() - 1 }),
    },
  }));

const release = (tool: ToolRecord, token: number) =>
  mutateTool(tool.org_id, tool.id, (current) => releaseTool(current, token));

describe('tool holds (DynamoDB Local)', () => {
  useLocalAws();

  it('lets one publish hold a tool at a time, and its holder give it back', async () => {
    // Prepare
    const tool = await newTool();

    // Act
    const first = await hold(tool);
    const refused = await hold(tool).catch((error: unknown) => error);
    await release(tool, first);
    const second = await hold(tool);

    // Assess
    expect(first).toBe(1);
    expect(refused).toBeInstanceOf(ConflictError);
    expect(second).toBe(2);
  });

  it('keeps a stale holder from writing under its hold or giving back the next holder’s', async () => {
    // Prepare: the first publish's hold ran out, and a second publish took the tool.
    const tool = await newTool();
    const stale = await hold(tool);
    await runOut(tool);
    const current = await hold(tool);

    // Act
    const staleWrite = await mutateTool(tool.org_id, tool.id, (read) => {
      requireHeld(read, stale);
      return { next: { ...read, description: 'written by the stale holder' } };
    }).catch((error: unknown) => error);
    await release(tool, stale);
    const afterStale = await requireTool(tool.org_id, tool.id, true);
    await release(tool, current);
    const afterHolder = await requireTool(tool.org_id, tool.id, true);

    // Assess
    expect(staleWrite).toBeInstanceOf(ConflictError);
    expect(afterStale.description).toBe('');
    expect(storedLeaseOf(afterStale)).toMatchObject({ token: current });
    expect(isLeaseHeld(storedLeaseOf(afterStale))).toBe(true);
    expect(isLeaseHeld(storedLeaseOf(afterHolder))).toBe(false);
    expect(storedLeaseOf(afterHolder).token).toBe(current);
  });

  it('refuses a holder’s write that raced the take of a new hold, by its fencing condition', async () => {
    // Prepare: the holder read the tool; meanwhile its hold ran out and another publish took it.
    const tool = await newTool();
    const stale = await hold(tool);
    const readByStale = await requireTool(tool.org_id, tool.id, true);
    await runOut(tool);
    await hold(tool);
    const staleRelease = releaseTool(readByStale, stale);

    // Act: the release the stale holder prepared from its read, written at the tool's current revision.
    const now = await requireTool(tool.org_id, tool.id, true);
    const written = await replaceTool(now, { next: staleRelease.next, condition: staleRelease.condition });

    // Assess
    expect(written).toBe(false);
    expect(isLeaseHeld(storedLeaseOf(await requireTool(tool.org_id, tool.id, true)))).toBe(true);
  });
});
