import fc from 'fast-check';

/**
 * fast-check arbitraries from the JSON Schemas of the OpenAPI document (itself generated from
 * the route table's zod schemas): values that mostly follow the schema, with hostile values
 * mixed in at any position, so fuzzing reaches past validation and also probes its edges.
 */
export type JsonSchema = Record<string, unknown>;

/** What broke storage or objects before: numbers DynamoDB cannot hold, deep nesting, odd keys. */
const deeplyNested = (levels: number): unknown => (levels === 0 ? 1 : { a: deeplyNested(levels - 1) });
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(2 ** 53 + 2, -(2 ** 60), 1e-131, 1e300, -0, '', 'x'.repeat(5000), deeplyNested(30), [], {}),
  fc
    .constantFrom('__proto__', 'constructor', 'prototype', '')
    .map((key) => JSON.parse(`{${JSON.stringify(key)}:{"type":"Equals","value":1}}`)),
  fc.jsonValue({ maxDepth: 2 }),
);
const mapKeys = (keys: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 8, arbitrary: keys },
    { weight: 1, arbitrary: fc.constantFrom('', '__proto__', 'constructor', 'prototype') },
  );

const withHostile = (arbitrary: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 24, arbitrary }, { weight: 1, arbitrary: hostileValue });

const bounded = (value: unknown, fallback: number): number => (typeof value === 'number' ? value : fallback);

const stringArbitrary = (schema: JsonSchema): fc.Arbitrary<string> => {
  const minLength = bounded(schema.minLength, 0);
  const maxLength = Math.max(minLength, Math.min(bounded(schema.maxLength, 40), 40));
  switch (schema.format) {
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((date) => date.toISOString());
    case 'email':
      return fc.emailAddress();
    case 'uri':
      return fc.webUrl();
  }
  if (typeof schema.pattern === 'string') {
    try {
      return fc
        .stringMatching(new RegExp(schema.pattern))
        .filter((text) => text.length >= minLength && text.length <= bounded(schema.maxLength, 4096));
    } catch {
      // A pattern JavaScript cannot compile: plain strings will do.
    }
  }
  return fc.string({ minLength, maxLength, unit: 'grapheme' });
};

const numberArbitrary = (schema: JsonSchema, integer: boolean): fc.Arbitrary<number> => {
  const min =
    typeof schema.minimum === 'number'
      ? schema.minimum
      : typeof schema.exclusiveMinimum === 'number'
        ? schema.exclusiveMinimum + 1
        : -1000;
  const max =
    typeof schema.maximum === 'number'
      ? schema.maximum
      : typeof schema.exclusiveMaximum === 'number'
        ? schema.exclusiveMaximum - 1
        : 1000;
  const low = Math.max(min, -1e6);
  const high = Math.min(Math.max(max, low), 1e6);
  return integer
    ? fc.integer({ min: Math.ceil(low), max: Math.floor(high) })
    : fc.double({ min: low, max: high, noNaN: true, noDefaultInfinity: true });
};

const objectArbitrary = (schema: JsonSchema, depth: number): fc.Arbitrary<unknown> => {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema.required ?? []) as string[];
  const named = fc.record(
    Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, arbitraryOf(property, depth + 1)])),
    { requiredKeys: required.filter((name) => name in properties) },
  );
  const extra = schema.additionalProperties;
  if (extra === undefined || extra === false || Object.keys(properties).length > 0) return named;
  const keys = schema.propertyNames
    ? (arbitraryOf(schema.propertyNames as JsonSchema, depth + 1) as fc.Arbitrary<string>)
    : fc.string({ maxLength: 12 });
  const values = extra === true ? fc.jsonValue({ maxDepth: 2 }) : arbitraryOf(extra as JsonSchema, depth + 1);
  return fc.dictionary(mapKeys(keys.map(String)), values, { maxKeys: 3 });
};

/** An arbitrary of values for `schema`; beyond a few levels it stops descending. */
export const arbitraryOf = (schema: JsonSchema | boolean, depth = 0): fc.Arbitrary<unknown> => {
  // `true` allows anything, `false` nothing (only absent values pass).
  if (typeof schema === 'boolean') return schema ? fc.jsonValue({ maxDepth: 2 }) : fc.constant(null);
  if (depth > 8) return fc.constant(null);
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  let arbitrary: fc.Arbitrary<unknown>;
  if (variants) arbitrary = fc.oneof(...variants.map((variant) => arbitraryOf(variant, depth + 1)));
  else if (Array.isArray(schema.allOf)) arbitrary = arbitraryOf(schema.allOf[0] as JsonSchema, depth + 1);
  else if ('const' in schema) arbitrary = fc.constant(schema.const);
  else if (Array.isArray(schema.enum)) arbitrary = fc.constantFrom(...(schema.enum as unknown[]));
  else {
    const types = Array.isArray(schema.type)
      ? (schema.type as string[])
      : typeof schema.type === 'string'
        ? [schema.type]
        : [];
    const ofType = (type: string): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'string':
          return stringArbitrary(schema);
        case 'integer':
          return numberArbitrary(schema, true);
        case 'number':
          return numberArbitrary(schema, false);
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array':
          return fc.array(arbitraryOf((schema.items ?? {}) as JsonSchema, depth + 1), {
            minLength: bounded(schema.minItems, 0),
            maxLength: Math.max(bounded(schema.minItems, 0), Math.min(bounded(schema.maxItems, 3), 3)),
          });
        default:
          return objectArbitrary(schema, depth);
      }
    };
    arbitrary = types.length === 0 ? fc.jsonValue({ maxDepth: 2 }) : fc.oneof(...types.map(ofType));
  }
  return withHostile(arbitrary);
};

const isoDateTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i;

const withinBounds = (schema: JsonSchema, value: number): boolean =>
  !(
    (typeof schema.minimum === 'number' && value < schema.minimum) ||
    (typeof schema.maximum === 'number' && value > schema.maximum) ||
    (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) ||
    (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum)
  );

const stringAllows = (schema: JsonSchema, text: string): boolean => {
  const length = [...text].length;
  if (typeof schema.minLength === 'number' && length < schema.minLength) return false;
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) return false;
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(text)) return false;
  return schema.format !== 'date-time' || (isoDateTime.test(text) && !Number.isNaN(Date.parse(text)));
};

/**
 * Whether `schema` allows `text` as the value of a query parameter or a header: as a string, or
 * read as the integer, number or array item the schema asks for.
 */
export const allowsText = (schema: JsonSchema | boolean, text: string): boolean => {
  if (typeof schema === 'boolean') return schema;
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) return variants.some((variant) => allowsText(variant, text));
  if (Array.isArray(schema.allOf)) return (schema.allOf as JsonSchema[]).every((part) => allowsText(part, text));
  if ('const' in schema) return String(schema.const) === text;
  if (Array.isArray(schema.enum)) return schema.enum.map(String).includes(text);
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  return types.some((type) => {
    switch (type) {
      case undefined:
        return true;
      case 'string':
        return stringAllows(schema, text);
      case 'integer':
        return /^[+-]?\d+$/.test(text) && withinBounds(schema, Number(text));
      case 'number':
        return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) && withinBounds(schema, Number(text));
      case 'boolean':
        return ['true', 'false'].includes(text.toLowerCase());
      case 'array':
        return allowsText((schema.items ?? true) as JsonSchema | boolean, text);
      case 'null':
        return false;
      default:
        return true;
    }
  });
};

/**
 * Values a query parameter or header of `schema` must refuse (of these, the ones it does refuse),
 * all printable ASCII so that they can be sent as headers: the wrong type, out of range, too
 * long, off its pattern or its enum. Empty when the schema takes any text.
 */
export const forbiddenTexts = (schema: JsonSchema): string[] => {
  const maxLength = typeof schema.maxLength === 'number' ? [`${'x'.repeat(schema.maxLength)}y`] : [];
  const items = (schema.items ?? {}) as JsonSchema;
  const itemMaxLength = typeof items.maxLength === 'number' ? [`${'x'.repeat(items.maxLength)}y`] : [];
  const bounds = [schema.maximum, schema.minimum]
    .filter((bound): bound is number => typeof bound === 'number')
    .map((bound) => String(bound === schema.maximum ? bound + 1 : bound - 1));
  const candidates = ['', 'x', 'not-a-value', '1.5', '0x10', '-1', '2000-13-45T99:99:99Z', ...bounds, ...maxLength];
  return [...candidates, ...itemMaxLength].filter((text) => !allowsText(schema, text));
};
