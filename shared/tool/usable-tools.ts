import { NotFoundError } from '../kernel/errors';
import { getTool } from './tool-repository';

/** Whether the tool exists in the organization and is not deprecated, so a version of it can be resolved. */
export const isUsableTool = async (orgId: string, toolId: string): Promise<boolean> => {
  const tool = await getTool(orgId, toolId);
  return tool !== undefined && !tool.deprecated;
};

/**
 * 404 naming the first tool that does not exist in the organization (or is deprecated, so no
 * version of it can be resolved), as dynamic behavior sets answer for their tool call specs.
 */
export const requireToolsExist = async (orgId: string, toolIds: readonly string[]): Promise<void> => {
  for (const toolId of new Set(toolIds)) {
    if (!(await isUsableTool(orgId, toolId)))
      throw new NotFoundError(`Tool ${toolId} does not exist or is deprecated.`);
  }
};
