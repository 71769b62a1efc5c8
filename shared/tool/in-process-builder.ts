import { deleteObjectKeys } from '../aws/bucket';
import { buildToolProject, storeArtifact, type ToolBuilder } from './tool-build';

/** The in-process builder runs in the request, which has no gateway deadline locally: it waits for nothing. */
export const inProcessBuilder: ToolBuilder = {
  build: async (request) => ({ state: 'built', result: await buildToolProject(request) }),
  buildAndWait: async (request) => {
    const { built, ...result } = await buildToolProject(request);
    const { artifact, ...declared } = built;
    await storeArtifact(request.artifactKey, artifact);
    return { ...result, built: declared };
  },
  discard: (artifactKey) => deleteObjectKeys([artifactKey]),
};
