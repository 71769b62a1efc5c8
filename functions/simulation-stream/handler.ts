import { Readable } from 'node:stream';
import { implementGroup, streamHandler } from '#shared/http/http-handler';
import { simulationSessionOperations } from '#shared/simulation/session-operations';
import { recommendSessionTexts, scoreSimulationSession } from '#shared/simulation/session-scoring';
import {
  createSimulationSession,
  forkSimulationSession,
  stepSimulationSession,
  streamSessionStep,
} from '#shared/simulation/session-steps';
import { listSessionTurns } from '#shared/simulation/session-turns';
import { getSessionTree, getSimulationSession } from '#shared/simulation/sessions';

/** One JSON document, sent once it is made: its status is the operation's only if it was. */
const document = async (made: Promise<unknown>) => ({ bytes: Readable.from([JSON.stringify(await made)]) });

/** Whether the client asked for the step's events as they come (NDJSON), rather than one document. */
const wantsEvents = (accept: string | undefined) => accept?.includes('application/x-ndjson') === true;

export const handler = streamHandler(
  implementGroup('simulation-stream', [simulationSessionOperations], {
    'create-simulation-session': ({ path, body, caller }) =>
      document(createSimulationSession(path.organization, caller, body)),

    'get-simulation-session': ({ path, caller }) =>
      document(getSimulationSession(path.organization, caller, path.simulation_session_id, listSessionTurns)),

    'step-simulation-session': async ({ path, headers, body, caller, context }) => {
      if (wantsEvents(headers.accept)) {
        context.setHeader('content-type', 'application/x-ndjson');
        return streamSessionStep(path.organization, caller, path.simulation_session_id, body.caller_text);
      }
      return document(stepSimulationSession(path.organization, caller, path.simulation_session_id, body.caller_text));
    },

    'fork-simulation-session': ({ path, body, caller }) =>
      document(forkSimulationSession(path.organization, caller, path.simulation_session_id, body)),

    'get-simulation-session-tree': ({ path, caller }) =>
      document(getSessionTree(path.organization, caller, path.simulation_session_id)),

    'score-simulation-session': ({ path, body, caller }) =>
      document(scoreSimulationSession(path.organization, caller, path.simulation_session_id, body.metric_ids)),

    'recommend-simulation-session-texts': ({ path, body, caller }) =>
      document(recommendSessionTexts(path.organization, caller, path.simulation_session_id, body.n)),
  }),
);
