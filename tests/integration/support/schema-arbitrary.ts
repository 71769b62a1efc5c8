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
