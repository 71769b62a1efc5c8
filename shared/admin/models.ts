import type { Caller } from '../kernel/caller';
import { requirePermission } from '../kernel/permissions';
import { availableModels } from '../llm/registry';
import { requireOrganization } from '../organization/index';

/** The models the deployment's configuration makes available (Admin:GetModels). */
export const listModels = async (orgId: string, caller: Caller) => {
  await requireOrganization(orgId);
  requirePermission(caller, 'Admin:GetModels');
  return { models: availableModels() };
};
