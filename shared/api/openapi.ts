import { z } from 'zod';
import { maxBodyBytesOf, type Operation } from '../kernel/operation';
import { canonicalParameterNames, canonicalResourcePaths } from './paths';

type JsonSchema = Record<string, unknown>;

const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
  });
  return rest as JsonSchema;
};

const errorSchema = {
  type: 'object',
  properties: { detail: { type: 'string' } },
  required: ['detail'],
};

const validationErrorSchema = {
  type: 'object',
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
          msg: { type: 'string' },
          type: { type: 'string' },
        },
        required: ['loc', 'msg', 'type'],
      },
    },
  },
  required: ['detail'],
};

const rateLimitHeaders = {
  'Retry-After': { description: 'Seconds until the bucket holds a token again.', schema: { type: 'integer' } },
  'X-RateLimit-Limit': { description: 'The bucket size: the largest burst.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Tokens left in the bucket.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Epoch seconds at which the bucket is full again.', schema: { type: 'integer' } },
};

const rateLimitDescription = (operation: Operation): string =>
  operation.checksCredentials
    ? `Too many sign-ins: new tokens are issued at ${operation.rateLimitPerMinute} a minute in bursts of SIGN_IN_BURST (30 unless configured) per credential and user (a key's sign-in while its last token has half its hour left gets that token back, uncounted); after 5 failures a minute from one client address for one credential, that address is refused for it.`
    : `Rate limited: a token bucket per user of ${operation.rateLimitPerMinute}, refilled at ${operation.rateLimitPerMinute} a minute.`;

const hasBody = (operation: Operation): boolean =>
  operation.request.body !== undefined || operation.request.bodyType !== undefined;

const errorResponses = (operation: Operation): Record<string, unknown> => {
  const json = (description: string, schema: JsonSchema = { $ref: '#/components/schemas/ErrorResponse' }) => ({
    description,
    content: { 'application/json': { schema } },
  });
  const responses: Record<string, unknown> = {
    '400': json('The request is invalid in this context.'),
    '404': json('The organization or the addressed record does not exist, or the caller may not see it.'),
    '409': json('The request conflicts with the current state.'),
    '422': json('Path, query, header or body failed validation, or holds a value that cannot be stored as given.', {
      $ref: '#/components/schemas/HTTPValidationError',
    }),
    '503': json('The service is going through temporary maintenance.'),
  };
  if (operation.auth !== 'none' || operation.checksCredentials) {
    responses['401'] = json('Invalid authorization credentials.');
    responses['403'] = json(operation.auth === 'none' ? 'The user is not verified.' : 'Missing required permissions.');
  }
  if (hasBody(operation)) {
    responses['413'] = json(`The body is larger than the ${maxBodyBytesOf(operation)} bytes this operation accepts.`);
  }
  if (operation.request.body !== undefined) {
    responses['415'] = json(`The body is not ${requestMediaType(operation)}.`);
  }
  if (operation.rateLimitPerMinute !== undefined) {
    responses['429'] = { ...json(rateLimitDescription(operation)), headers: rateLimitHeaders };
  }
  for (const [status, description] of Object.entries(operation.extraErrors ?? {}))
    responses[status] = json(description);
  return responses;
};

const parametersOf = (
  location: 'path' | 'query' | 'header',
  schema: z.ZodObject | undefined,
  names = new Map<string, string>(),
) =>
  Object.entries(schema?.shape ?? {}).map(([name, field]) => {
    const fieldSchema = field as z.ZodType;
    const json = toSchema(fieldSchema, 'input');
    return {
      name: names.get(name) ?? name,
      in: location,
      required: location === 'path' || !fieldSchema.safeParse(undefined).success,
      ...(typeof json.description === 'string' ? { description: json.description } : {}),
      schema: json,
    };
  });

const requestMediaType = (operation: Operation): string => {
  const { bodyType } = operation.request;
  switch (bodyType) {
    case 'multipart':
      return 'multipart/form-data';
    case 'form':
      return 'application/x-www-form-urlencoded';
    case 'binary':
      return operation.request.mediaType ?? 'application/octet-stream';
    default:
      return 'application/json';
  }
};

const requestBodyOf = (operation: Operation) => {
  const { body } = operation.request;
  if (!body) return undefined;
  return {
    required: !body.safeParse(undefined).success,
    content: { [requestMediaType(operation)]: { schema: toSchema(body, 'input') } },
  };
};

const successResponseOf = (operation: Operation) => {
  const { status, body, contentType } = operation.response;
  const mediaType = contentType ?? (operation.streaming ? 'application/x-ndjson' : 'application/json');
  // A streamed zip or JSON document (test-tool) is, to the client, one answer like any other.
  const description =
    mediaType === 'application/x-ndjson' ? 'Succeeded: a stream of newline-delimited JSON events.' : 'Succeeded.';
  if (!body || status === 204) return { description };
  return { description, content: { [mediaType]: { schema: toSchema(body, 'output') } } };
};

/**
 * Where each operation is listed: its canonical resource (one template per URL, parameters
 * named as the first operation on it names them), with the trailing slash that operation has.
 */
const documentedPaths = (operations: readonly Operation[]) => {
  const resources = canonicalResourcePaths(operations);
  const trailingSlashes = new Map<string, boolean>();
  for (const operation of operations) {
    const resource = resources.get(operation) as string;
    if (!trailingSlashes.has(resource)) trailingSlashes.set(resource, operation.path.endsWith('/') && resource !== '/');
  }
  return (operation: Operation) => {
    const resource = resources.get(operation) as string;
    return {
      path: `${resource}${trailingSlashes.get(resource) ? '/' : ''}`,
      names: canonicalParameterNames(operation, resource),
    };
  };
};

const routingNote =
  'Paths match with or without their trailing slash. Where a fixed segment and a parameter could both match (`/user/signin`, `/user/{requested_user_id}`), the fixed segment wins.';

/** The OpenAPI 3.1 document of the platform, generated from the route table's zod schemas. */
export const openApiDocument = (operations: readonly Operation[], info: { title: string; version: string }) => {
  const paths: Record<string, Record<string, unknown>> = {};
  const documentedPathOf = documentedPaths(operations);
  for (const operation of operations) {
    const { path, names } = documentedPathOf(operation);
    const item = paths[path] ?? {};
    paths[path] = item;
    item[operation.method.toLowerCase()] = {
      operationId: operation.operationId,
      summary: operation.summary,
      tags: [operation.tag],
      ...(operation.deprecated ? { deprecated: true } : {}),
      ...(operation.platformExtension
        ? { description: 'A platform extension: not in the reference API.', 'x-platform-extension': true }
        : {}),
      parameters: [
        ...parametersOf('path', operation.request.path, names),
        ...parametersOf('query', operation.request.query),
        ...parametersOf('header', operation.request.headers),
      ],
      ...(requestBodyOf(operation) ? { requestBody: requestBodyOf(operation) } : {}),
      responses: {
        [String(operation.response.status)]: successResponseOf(operation),
        ...Object.fromEntries(
          Object.entries(operation.response.otherSuccesses ?? {}).map(([status, description]) => [
            status,
            { description },
          ]),
        ),
        ...errorResponses(operation),
      },
      security: operation.auth === 'required' ? [{ Bearer: [] }, { Basic: [] }, { DPoP: [] }] : [],
    };
  }
  return {
    openapi: '3.1.0',
    info: { ...info, description: routingNote },
    paths,
    components: {
      schemas: { ErrorResponse: errorSchema, HTTPValidationError: validationErrorSchema },
      securitySchemes: {
        Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        Basic: { type: 'http', scheme: 'basic', description: 'Username {org_id}_{user_id}, password the JWT.' },
        DPoP: {
          type: 'http',
          scheme: 'dpop',
          description: 'RFC 9449 sender-constrained token with a DPoP proof header.',
        },
      },
    },
  };
};
