import { deleteItem, type PrimaryKey, queryAll } from './table';

/**
 * Deleting an organization erases every record it owns. Each repository registers how
 * to erase its own records, so a new entity cannot be forgotten by the delete operation.
 * Erasers must be idempotent: the delete is repeated until it succeeds.
 */
export type OrganizationEraser = (orgId: string) => Promise<void>;

const erasers = new Map<string, OrganizationEraser>();

export const registerOrganizationEraser = (entity: string, eraser: OrganizationEraser): void => {
  erasers.set(entity, eraser);
};

export const eraseOrganizationData = async (orgId: string): Promise<void> => {
  for (const eraser of erasers.values()) await eraser(orgId);
};

export const registeredErasers = (): string[] => [...erasers.keys()];

/** Deletes every item of one partition, a bounded batch at a time until none is left. */
export const erasePartition = async (partition: string): Promise<void> => {
  for (;;) {
    const items = await queryAll({ partition }, 500);
    if (items.length === 0) return;
    for (let start = 0; start < items.length; start += 25) {
      await Promise.all(
        items.slice(start, start + 25).map((item) => deleteItem({ pk: item.pk, sk: item.sk } as PrimaryKey)),
      );
    }
  }
};
