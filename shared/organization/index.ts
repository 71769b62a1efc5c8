/** What other capabilities may use of organization's records; everything else stays behind its domain functions. */
export {
  type BrandingImage,
  defaultRolesGenerationItem,
  getBrandingImage,
  getOrganization,
  markOrganizationDeleted,
  organizationCreateItems,
  organizationScanKey,
  requireOrganization,
  scanOrganizationIds,
} from './organization-repository';
export { renameOrganization, retentionDaysOf } from './organizations';
