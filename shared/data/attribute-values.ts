import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';

/**
 * Items and values in DynamoDB's wire format, converted here rather than by lib-dynamodb's
 * document client: each document command adds its conversion middleware to the call, so the SDK
 * resolves the client's middleware stack anew on every request (about a quarter of a Query's CPU
 * time), where the plain client resolves it once per command type (`cacheMiddleware`,
 * `shared/aws/clients.ts`). Converted as the document client did: undefined values left out,
 * class instances refused, numbers read back as numbers.
 */
export type Attributes = Record<string, AttributeValue>;

const marshallOptions = { removeUndefinedValues: true, convertClassInstanceToMap: false };

export const toAttributes = (value: Record<string, unknown>): Attributes => marshall(value, marshallOptions);

export const fromAttributes = (attributes: Attributes): Record<string, unknown> => unmarshall(attributes);

export const fromAttributesIfAny = (attributes: Attributes | undefined): Record<string, unknown> | undefined =>
  attributes === undefined ? undefined : fromAttributes(attributes);

/** The fields of a command's input (or a transaction item's) that hold items or values. */
const attributeFields = ['Item', 'Key', 'ExclusiveStartKey', 'ExpressionAttributeValues'] as const;

/** A command input as the plain client takes it: its items, keys and expression values converted. */
export const withAttributes = <Raw>(input: object): Raw => {
  const converted: Record<string, unknown> = { ...input };
  for (const field of attributeFields) {
    const value = converted[field];
    if (value !== undefined) converted[field] = toAttributes(value as Record<string, unknown>);
  }
  return converted as Raw;
};

/** A value's size as DynamoDB counts it (names and values in UTF-8; a list or map 3 bytes and 1 per element more). */
const valueBytes = (value: AttributeValue): number => {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return Math.ceil(value.N.replace(/^-|\.|e.*$/gi, '').length / 2) + 1;
  if (value.B !== undefined) return value.B.byteLength;
  if (value.L !== undefined) return value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 3);
  if (value.M !== undefined) return 3 + attributesBytes(value.M, 1);
  if (value.SS !== undefined) return value.SS.reduce((sum, element) => sum + Buffer.byteLength(element), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, element) => sum + element.length, 0);
  return 1;
};

const attributesBytes = (attributes: Attributes, perEntry = 0): number => {
  let total = 0;
  for (const [name, value] of Object.entries(attributes))
    total += perEntry + Buffer.byteLength(name) + valueBytes(value);
  return total;
};

/** An item's size as DynamoDB bills its writes: by the KB started (twice in a transaction). */
export const itemBytes = (item: Record<string, unknown>): number => attributesBytes(toAttributes(item));
