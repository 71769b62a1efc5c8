import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { deleteItem, type TransactItem, transactWrite, updateItem } from '../data/table';
import { ConflictError, NotFoundError } from '../kernel/errors';
import { directoryEntryItem } from './organization-directory';
import { type OrganizationRecord, organizationRecord } from './schemas';

/**
 * Organizations. One record per organization plus its branding images, each image its own
 * item (raw bytes, up to a few hundred KB) so the record stays small and images are written
 * in the same transaction as the record.
 */
export const organizations = defineEntity({
  name: 'organization',
  token: 'ORGANIZATION',
  schema: organizationRecord,
  sort: () => 'ORGANIZATION',
  /**
   * The record goes last (the catalog lists it last), and only once marked deleted: until then a
   * failed delete can be repeated, and the id stays taken.
   */
  erase: (orgId: string): Promise<void> =>
    deleteItem(
      organizations.key(orgId, {}),
      { expression: 'attribute_not_exists(pk) OR attribute_exists(deleted_at)' },
      () => new ConflictError(`Organization ${orgId} was not marked deleted.`),
    ),
});

export const brandingImages = ['logo', 'square_logo', 'favicon', 'signup_page_headshot'] as const;
export type BrandingImage = (typeof brandingImages)[number];

export const organizationBranding = defineEntity({
  name: 'organization-branding',
  token: 'BRANDING',
  schema: z.object({
    image: z.enum(brandingImages),
    bytes: z.custom<Uint8Array>((bytes) => bytes instanceof Uint8Array),
  }),
  sort: (branding: { image: BrandingImage }) => branding.image,
});

/** One of the organization's images (PNG, or ICO for the favicon), if it has one. */
export const getBrandingImage = async (orgId: string, image: BrandingImage): Promise<Uint8Array | undefined> =>
  (await organizationBranding.get(orgId, { image }))?.bytes;

/** The organization record, or undefined when it does not exist or is being deleted. */
export const getOrganization = async (
  orgId: string,
  options: { includeDeleted?: boolean; consistent?: boolean } = {},
): Promise<OrganizationRecord | undefined> => {
  const record = await organizations.get(orgId, {}, options.consistent);
  if (!record) return undefined;
  return record.deleted_at && !options.includeDeleted ? undefined : record;
};

export const requireOrganization = async (orgId: string): Promise<OrganizationRecord> => {
  const record = await getOrganization(orgId);
  if (!record) throw new NotFoundError(`Organization ${orgId} does not exist.`);
  return record;
};

/** Transaction items creating an organization, its directory entry and its images; fails if the id exists (even deleted). */
export const organizationCreateItems = (
  record: OrganizationRecord,
  images: Partial<Record<BrandingImage, Buffer>>,
): TransactItem[] => [
  organizations.create(record.org_id, { ...record, listed_in_directory: true }),
  directoryEntryItem(record.org_id),
  ...brandingItems(record.org_id, images),
];

/**
 * The transaction item recording that the organization's default roles were upgraded from
 * generation `from` (absent when 1) to `to`: it fails when another upgrade came first.
 */
export const defaultRolesGenerationItem = (orgId: string, from: number, to: number): TransactItem => ({
  Update: {
    Key: organizations.key(orgId, {}),
    UpdateExpression: 'SET default_roles_generation = :to',
    ConditionExpression:
      from === 1
        ? 'attribute_exists(pk) AND attribute_not_exists(deleted_at) AND (attribute_not_exists(default_roles_generation) OR default_roles_generation = :from)'
        : 'attribute_exists(pk) AND attribute_not_exists(deleted_at) AND default_roles_generation = :from',
    ExpressionAttributeValues: { ':to': to, ':from': from },
  },
});

/** Whether the organization's record predates the directory: it is entered by `listInDirectory`. */
export const needsDirectoryEntry = (organization: { listed_in_directory?: boolean }): boolean =>
  organization.listed_in_directory !== true;

class OrganizationGone extends Error {}

/**
 * Enters an organization made before the directory, with the mark on its record, at once: nothing
 * is written once the organization is marked deleted, so its erasure leaves no entry behind
 * (false: it is gone). Repeating it (two instances at once) writes the same.
 */
export const listInDirectory = async (orgId: string): Promise<boolean> => {
  try {
    await transactWrite(
      [
        directoryEntryItem(orgId),
        {
          Update: {
            Key: organizations.key(orgId, {}),
            UpdateExpression: 'SET listed_in_directory = :listed',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleted_at)',
            ExpressionAttributeValues: { ':listed': true },
          },
        },
      ],
      () => new OrganizationGone(),
    );
    return true;
  } catch (error) {
    if (error instanceof OrganizationGone) return false;
    throw error;
  }
};

const brandingItems = (orgId: string, images: Partial<Record<BrandingImage, Buffer>>): TransactItem[] =>
  Object.entries(images)
    .filter((entry): entry is [BrandingImage, Buffer] => entry[1] !== undefined)
    .map(([image, bytes]) => ({
      Put: { Item: organizationBranding.item(orgId, { image, bytes }) },
    }));

export type OrganizationChanges = Partial<
  Pick<
    OrganizationRecord,
    | 'org_name'
    | 'title'
    | 'main_description'
    | 'sub_description'
    | 'onboarding_instructions'
    | 'default_user_preferences'
    | 'user_dimensions'
    | 'conversation_retention_days'
  >
>;

/** Applies the given fields and images at once; the organization must exist and not be deleted. */
export const updateOrganization = async (
  orgId: string,
  changes: OrganizationChanges,
  images: Partial<Record<BrandingImage, Buffer>>,
  updatedAt: string,
): Promise<void> => {
  const fields = Object.entries({ ...changes, updated_at: updatedAt }).filter(([, value]) => value !== undefined);
  const names = Object.fromEntries(fields.map(([name], index) => [`#f${index}`, name]));
  const values = Object.fromEntries(fields.map(([, value], index) => [`:v${index}`, value]));
  await transactWrite(
    [
      {
        Update: {
          Key: organizations.key(orgId, {}),
          UpdateExpression: `SET ${fields.map((_, index) => `#f${index} = :v${index}`).join(', ')}`,
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleted_at)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      ...brandingItems(orgId, images),
    ],
    () => new NotFoundError(`Organization ${orgId} does not exist.`),
  );
};

/** Marks the organization deleted (idempotent): from now on it is treated as absent. */
export const markOrganizationDeleted = async (orgId: string, at: string): Promise<void> => {
  await updateItem(
    {
      Key: organizations.key(orgId, {}),
      UpdateExpression: 'SET deleted_at = if_not_exists(deleted_at, :at)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':at': at },
    },
    () => new NotFoundError(`Organization ${orgId} does not exist.`),
  );
};
