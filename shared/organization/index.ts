/** What other capabilities may use of organization's records; everything else stays behind its domain functions. */

export {
  directoryKeyAfter,
  listedOrganizationIds,
  organizationDirectory,
} from './organization-directory';
export {
  type BrandingImage,
  defaultRolesGenerationItem,
  getBrandingImage,
  getOrganization,
  listInDirectory,
  markOrganizationDeleted,
  needsDirectoryEntry,
  organizationCreateItems,
  requireOrganization,
} from './organization-repository';
export { renameOrganization, retentionDaysOf } from './organizations';
