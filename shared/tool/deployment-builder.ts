import { inProcessBuilder } from './in-process-builder';
import type { ToolBuilder } from './tool-build';

/** The builder of this deployment: CodeBuild in AWS (`TOOL_BUILDER=codebuild`), in-process otherwise. */
export const toolBuilder = async (): Promise<ToolBuilder> =>
  process.env.TOOL_BUILDER === 'codebuild' ? (await import('./codebuild-builder')).codeBuildBuilder : inProcessBuilder;
