import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { writeIfUnchanged } from '../data/revisions';
import { failedConditions, queryAll, queryPage, transactWrite } from '../data/table';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { maxSessionsPerTree, type SessionRecord, sessionRecord } from './session-schemas';

/**
 * Simulation sessions, one partition per organization (sort key: the session id, so creation
 * order), and per fork tree a counter of its sessions, which bounds it:
 *
 *   session       SIMULATION_SESSION       {session}
 *                 gsi1 SIMULATION_SESSION#ROOT#{root} / {session}   (a tree's sessions)
 *   tree counter  SIMULATION_SESSION_TREE  {root}
 *
 * Both carry the session's `expires_at_epoch` (a fork's is its tree's): a tree expires whole,
 * with its conversations, by the table's TTL.
 */
export const simulationSessions = defineEntity({
  name: 'simulation-session',
  token: 'SIMULATION_SESSION',
  schema: sessionRecord,
  sort: (session: { id: string }) => session.id,
  indexes: {
    byTree: {
      index: 'gsi1',
      partition: (of: { root_id: string }) => ['ROOT', of.root_id],
      sort: (session) => session.id,
    },
  },
});

export const sessionTrees = defineEntity({
  name: 'simulation-session-tree',
  token: 'SIMULATION_SESSION_TREE',
  schema: z.object({ root_id: z.string(), session_count: z.number().int(), expires_at_epoch: z.number().int() }),
  sort: (tree: { root_id: string }) => tree.root_id,
});

export const getSession = (orgId: string, id: string, consistent = false): Promise<SessionRecord | undefined> =>
  simulationSessions.get(orgId, { id }, consistent);

/** Stores a new session that starts a tree, with its tree's counter. */
export const insertRootSession = async (session: SessionRecord): Promise<void> => {
  await transactWrite([
    simulationSessions.create(session.org_id, session),
    sessionTrees.create(session.org_id, {
      root_id: session.id,
      session_count: 1,
      expires_at_epoch: session.expires_at_epoch,
    }),
  ]);
};

/**
 * Stores the sessions a fork made, all or none: the tree's counter moves on by their number only
 * while the tree stays within {@link maxSessionsPerTree} (400 beyond), and only if the tree still
 * exists (404: it expired meanwhile).
 */
export const insertForkedSessions = async (orgId: string, rootId: string, forks: SessionRecord[]): Promise<void> => {
  await transactWrite(
    [
      {
        Update: {
          Key: sessionTrees.key(orgId, { root_id: rootId }),
          UpdateExpression: 'SET session_count = session_count + :added',
          ConditionExpression: 'attribute_exists(pk) AND session_count <= :room',
          ExpressionAttributeValues: { ':added': forks.length, ':room': maxSessionsPerTree - forks.length },
        },
      },
      ...forks.map((session) => simulationSessions.create(orgId, session)),
    ],
    (error) =>
      failedConditions(error).includes(0)
        ? new BadRequestError(
            `A fork tree holds at most ${maxSessionsPerTree} sessions (or it expired); this fork would pass that.`,
          )
        : new ConflictError('The fork tree changed while the fork was stored; retry.'),
  );
};

/** Replaces the session if nobody changed it since `previous` was read; false when someone did (or it expired). */
export const replaceSession = (previous: SessionRecord, next: SessionRecord): Promise<boolean> =>
  writeIfUnchanged(simulationSessions.replacement(previous.org_id, { ...next, updated_at: nowIso() }, previous));

/** How many sessions a fork tree holds (0 once it expired). */
export const getTreeSize = async (orgId: string, rootId: string): Promise<number> =>
  (await sessionTrees.get(orgId, { root_id: rootId }, true))?.session_count ?? 0;

/** The sessions of a fork tree in creation order (the root first); bounded by the tree's size. */
export const listTreeSessions = async (orgId: string, rootId: string): Promise<SessionRecord[]> =>
  (await queryAll(simulationSessions.queryIndex(orgId, 'byTree', { root_id: rootId }), maxSessionsPerTree)).map(
    (item) => simulationSessions.parse(item),
  );

/** The organization's latest sessions, newest first (`keep` filters a bounded page). */
export const queryRecentSessions = async (
  orgId: string,
  limit: number,
  keep: (session: SessionRecord) => boolean,
): Promise<SessionRecord[]> =>
  (
    await queryPage(simulationSessions.query(orgId, {}, { forward: false }), {
      limit,
      keep: (item) => keep(simulationSessions.parse(item)),
      maxReads: limit * 5,
    })
  ).items.map((item) => simulationSessions.parse(item));

export const sessionNotFound = (id: string) => new NotFoundError(`Simulation session ${id} does not exist.`);
