import { z } from 'zod';
import type { Operation } from '../kernel/operation';

type JsonSchema = Record<string, unknown>;

const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
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

const errorResponses = (operation: Operation): Record<string, unknown> => {
  const json = (description: string, schema: JsonSchema = { $ref: '#/components/schemas/ErrorResponse' }) => ({
    description,
    content: { 'application/json': { schema } },
  });
  const responses: Record<string, unknown> = {
    '400': json('The request is invalid in this context.'),
    '404': json('The organization or the addressed record does not exist.'),
    '409': json('The request conflicts with the current state.'),
    '422': json('Path, query, header or body failed validation.', {
      $ref: '#/components/schemas/HTTPValidationError',
    }),
    '503': json('The service is going through temporary maintenance.'),
  };
  if (operation.auth !== 'none') {
    responses['401'] = json('Invalid authorization credentials.');
    responses['403'] = json('Missing required permissions.');
  }
  if (operation.rateLimitPerMinute !== undefined) {
    responses['429'] = json(`More than ${operation.rateLimitPerMinute} requests per minute for this operation.`);
  }
  return responses;
};

const parametersOf = (location: 'path' | 'query' | 'header', schema: z.ZodObject | undefined) =>
  Object.entries(schema?.shape ?? {}).map(([name, field]) => {
    const fieldSchema = field as z.ZodType;
    const json = toSchema(fieldSchema, 'input');
    return {
      name,
      in: location,
      required: location === 'path' || !fieldSchema.safeParse(undefined).success,
      ...(typeof json.description === 'string' ? { description: json.description } : {}),
      schema: json,
    };
  });

const requestBodyOf = (operation: Operation) => {
  const { body, bodyType } = operation.request;
  // The token endpoint's OAuth form has never been part of the document; describing it is a separate change.
  if (!body || bodyType === 'form') return undefined;
  const mediaType =
    bodyType === 'multipart' ? 'multipart/form-data' : bodyType === 'binary' ? 'application/octet-stream' : 'application/json';
  return {
    required: !body.safeParse(undefined).success,
    content: { [mediaType]: { schema: toSchema(body, 'input') } },
  };
};

const successResponseOf = (operation: Operation) => {
  const { status, body, contentType } = operation.response;
  const description = operation.streaming ? 'Succeeded: a stream of newline-delimited JSON events.' : 'Succeeded.';
  if (!body || status === 204) return { description };
  return {
    description,
    content: { [contentType ?? (operation.streaming ? 'application/x-ndjson' : 'application/json')]: { schema: toSchema(body, 'output') } },
  };
};

/** The OpenAPI 3.1 document of the platform, generated from the route table's zod schemas. */
export const openApiDocument = (operations: readonly Operation[], info: { title: string; version: string }) => {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) {
    const item = paths[operation.path] ?? {};
    paths[operation.path] = item;
    item[operation.method.toLowerCase()] = {
      operationId: operation.operationId,
      summary: operation.summary,
      tags: [operation.tag],
      ...(operation.deprecated ? { deprecated: true } : {}),
      parameters: [
        ...parametersOf('path', operation.request.path),
        ...parametersOf('query', operation.request.query),
        ...parametersOf('header', operation.request.headers),
      ],
      ...(requestBodyOf(operation) ? { requestBody: requestBodyOf(operation) } : {}),
      responses: { [String(operation.response.status)]: successResponseOf(operation), ...errorResponses(operation) },
      security: operation.auth === 'required' ? [{ Bearer: [] }, { Basic: [] }, { DPoP: [] }] : [],
    };
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      schemas: { ErrorResponse: errorSchema, HTTPValidationError: validationErrorSchema },
      securitySchemes: {
        Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        Basic: { type: 'http', scheme: 'basic', description: 'Username {org_id}_{user_id}, password the JWT.' },
        DPoP: { type: 'http', scheme: 'dpop', description: 'RFC 9449 sender-constrained token with a DPoP proof header.' },
      },
    },
  };
};
