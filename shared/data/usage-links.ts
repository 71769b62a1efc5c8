import { z } from 'zod';
import { BadRequestError } from '../kernel/errors';
import { defineEntity } from './entity';
import { nameKeyPart } from './key-parts';
import { type PrimaryKey, queryPage, type TransactItem } from './table';

/*
 * What simulation unit tests (and unit test sets) use, for the rules that refuse deleting or
 * deactivating a used record. One link item per (used record, user), written and removed in the
 * same transaction as the user's record:
 *   usage link   SIM_USAGE   {target}#{userId}      target: persona#{id}, scenario#{id}, metric#{id},
 *                                                   service#{id}, version-set#{serviceId}#{name},
 *                                                   unit-test#{id} (used by a set)
 * A check is one Query of one item. The same transaction also moves a stamp on the used record
 * (`usage_stamp` on versioned heads, `revision` on services and unit tests), and a deletion is
 * conditioned on the stamp it read before checking, so a user created meanwhile makes it fail
 * and check again: a concurrent create and delete never both win.
 */

export const simulationUsages = defineEntity({
  name: 'simulation-usage',
  token: 'SIM_USAGE',
  schema: z.object({ target: z.string(), user_id: z.string(), user_name: z.string() }),
  sort: (link: { target: string; user_id: string }) => `${link.target}#${link.user_id}`,
});

export const usageTargets = {
  persona: (id: string) => `persona#${id}`,
  scenario: (id: string) => `scenario#${id}`,
  metric: (id: string) => `metric#${id}`,
  service: (id: string) => `service#${id}`,
  // Encoded so a `#` in a name cannot make one name a prefix of another's key.
  versionSet: (serviceId: string, name: string) => `version-set#${serviceId}#${nameKeyPart(encodeURIComponent(name))}`,
  unitTest: (id: string) => `unit-test#${id}`,
};

export interface SimulationUser {
  user_id: string;
  user_name: string;
}

/** One user (a unit test, or a set for `unit-test#` targets) of the target, if any. */
export const firstSimulationUser = async (orgId: string, target: string): Promise<SimulationUser | undefined> => {
  const page = await queryPage(simulationUsages.query(orgId, {}, { prefix: `${target}#` }), { limit: 1 });
  const [item] = page.items;
  return item ? simulationUsages.parse(item) : undefined;
};

/** The transaction items linking `user` to each target. */
export const linkUsages = (orgId: string, user: SimulationUser, targets: string[]): TransactItem[] =>
  targets.map((target) => ({ Put: { Item: simulationUsages.item(orgId, { target, ...user }) } }));

/** The transaction items removing the links of `userId` to each target. */
export const unlinkUsages = (orgId: string, userId: string, targets: string[]): TransactItem[] =>
  targets.map((target) => ({ Delete: { Key: simulationUsages.key(orgId, { target, user_id: userId }) } }));

/**
 * The transaction item claiming a versioned head (persona, scenario, metric) for a new user: the
 * head must exist and not be deleted, and its usage stamp moves.
 */
export const claimVersionedHead = (key: PrimaryKey): TransactItem => ({
  Update: {
    Key: key,
    UpdateExpression: 'ADD usage_stamp :one',
    ConditionExpression: 'attribute_exists(pk) AND deprecated = :false',
    ExpressionAttributeValues: { ':one': 1, ':false': false },
  },
});

/** The condition of a deletion that read `stamp` (absent: 0) before it checked the usage links. */
export const usageStampUnchanged = (stamp: number | undefined) => ({
  condition: '(attribute_not_exists(usage_stamp) OR usage_stamp = :usageStamp)',
  values: { ':usageStamp': stamp ?? 0 },
});

/** A catalog's `guardUnused`: 400 while the target is used, else the condition keeping it unused until written. */
export const guardUnusedTarget =
  (target: (id: string) => string, label: string) =>
  async (orgId: string, id: string, head: { usage_stamp?: number | undefined }) => {
    await requireUnused(orgId, target(id), `${label} ${id}`);
    return usageStampUnchanged(head.usage_stamp);
  };

/** The added and removed targets between two sets of them. */
export const usageChanges = (before: string[], after: string[]) => ({
  added: after.filter((target) => !before.includes(target)),
  removed: before.filter((target) => !after.includes(target)),
});

/** 400 naming a unit test (or set) that uses the target. */
export const requireUnused = async (orgId: string, target: string, what: string): Promise<void> => {
  const user = await firstSimulationUser(orgId, target);
  if (user) {
    const kind = target.startsWith('unit-test#') ? 'simulation unit test set' : 'simulation unit test';
    throw new BadRequestError(`${what} is used by ${kind} '${user.user_name}' (${user.user_id}).`);
  }
};
