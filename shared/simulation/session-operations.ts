import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import { commonHeaders, organizationPath } from '../kernel/schemas';
import {
  createdSession,
  createSessionRequest,
  forkResponse,
  forkSessionRequest,
  recommendRequest,
  recommendResponse,
  scoreResponse,
  scoreSessionRequest,
  sessionDetail,
  sessionIdPath,
  sessionTreeResponse,
  stepResult,
  stepSessionRequest,
} from './session-schemas';

/*
 * Simulation sessions (group `simulation-stream`, a platform extension): their operations run
 * conversation turns (create, step, fork: up to 8 at once) and model calls, which may outlast a
 * buffered answer's 29 s, so the group is a streamed function; each answers one JSON document,
 * its status sent once it is made (a step may stream its events instead).
 */

const headers = commonHeaders;
const group = 'simulation-stream';
const tag = 'Simulation';
const sessionPath = organizationPath.extend(sessionIdPath.shape);

export const createSessionOperation = defineOperation({
  operationId: 'create-simulation-session',
  method: 'POST',
  path: '/v1/{organization}/simulation/session/',
  group,
  tag,
  summary: 'Create a simulation session',
  auth: 'required',
  platformExtension: true,
  streaming: true,
  rateLimitPerMinute: 20,
  request: { path: organizationPath, headers, body: createSessionRequest },
  response: { status: 201, body: createdSession, contentType: 'application/json' },
});

export const getSessionOperation = defineOperation({
  operationId: 'get-simulation-session',
  method: 'GET',
  path: '/v1/{organization}/simulation/session/{simulation_session_id}',
  group,
  tag,
  summary: 'Get a simulation session with its turns',
  auth: 'required',
  platformExtension: true,
  streaming: true,
  rateLimitPerMinute: 200,
  request: { path: sessionPath, headers },
  response: { status: 200, body: sessionDetail, contentType: 'application/json' },
});

export const stepSessionOperation = defineOperation({
  operationId: 'step-simulation-session',
  method: 'POST',
  path: '/v1/{organization}/simulation/session/{simulation_session_id}/step',
  group,
  tag,
  summary: 'Take one turn of a simulation session',
  auth: 'required',
  platformExtension: true,
  streaming: true,
  // `Accept: application/x-ndjson` streams the turn's events as interact does, then the step.
  rateLimitPerMinute: 60,
  request: {
    path: sessionPath,
    headers: headers.extend({
      accept: z
        .string()
        .optional()
        .describe(
          '`application/x-ndjson` streams the turn’s events as interact does, then one `simulation-step` line.',
        ),
    }),
    body: stepSessionRequest,
  },
  extraErrors: { 409: 'The session is finished, or another turn of it is under way.' },
  response: { status: 200, body: stepResult, contentType: 'application/json' },
});

export const forkSessionOperation = defineOperation({
  operationId: 'fork-simulation-session',
  method: 'POST',
  path: '/v1/{organization}/simulation/session/{simulation_session_id}/fork',
  group,
  tag,
  summary: 'Fork a simulation session into alternatives',
  auth: 'required',
  platformExtension: true,
  streaming: true,
  rateLimitPerMinute: 10,
  request: { path: sessionPath, headers, body: forkSessionRequest },
  response: { status: 201, body: forkResponse, contentType: 'application/json' },
});

export const getSessionTreeOperation = defineOperation({
  operationId: 'get-simulation-session-tree',
  method: 'GET',
  path: '/v1/{organization}/simulation/session/{simulation_session_id}/tree',
  group,
  tag,
  summary: "Get a simulation session's fork tree",
  auth: 'required',
  platformExtension: true,
  streaming: true,
  rateLimitPerMinute: 200,
  request: { path: sessionPath, headers },
  response: { status: 200, body: sessionTreeResponse, contentType: 'application/json' },
});

export const scoreSessionOperation = defineOperation({
  operationId: 'score-simulation-session',
  method: 'POST',
  path: '/v1/{organization}/simulation/session/{simulation_session_id}/score',
  group,
  tag,
  summary: 'Judge a simulation session by metrics',
  auth: 'required',
  platformExtension: true,
  streaming: true,
  rateLimitPerMinute: 20,
  request: { path: sessionPath, headers, body: scoreSessionRequest },
  response: { status: 200, body: scoreResponse, contentType: 'application/json' },
});

export const recommendSessionTextsOperation = defineOperation({
  operationId: 'recommend-simulation-session-texts',
  method: 'POST',
  path: '/v1/{organization}/simulation/session/{simulation_session_id}/recommend',
  group,
  tag,
  summary: "Propose a simulation session's next caller texts",
  auth: 'required',
  platformExtension: true,
  streaming: true,
  rateLimitPerMinute: 30,
  request: { path: sessionPath, headers, body: recommendRequest },
  response: { status: 200, body: recommendResponse, contentType: 'application/json' },
});

export const simulationSessionOperations = [
  createSessionOperation,
  getSessionOperation,
  stepSessionOperation,
  forkSessionOperation,
  getSessionTreeOperation,
  scoreSessionOperation,
  recommendSessionTextsOperation,
] as const;
