import type { Node } from 'constructs';
import { parsePriceTable } from '#shared/llm/pricing';
import type { TracingExport } from '../constructs/tracing';

/** Deployment settings shared by every regional stack. */
export interface DeploymentSettings {
  stage: string;
  /** `prod` gets production throttling, log retention and log levels. */
  production: boolean;
  rootOrganizationId: string;
  superAdminEmail: string;
  maintenanceMode: boolean;
  /** SES sender address; its domain (or the address itself) must be a verified identity. */
  emailFrom: string;
  llmDefaultProvider: string;
  /** The models' prices as JSON (`LLM_PRICES`, `shared/llm/pricing.ts`); absent: only the built-in model is costed. */
  llmPrices: string | undefined;
  /** `iss` claim of issued tokens; defaults to a per-stage, per-region URN. */
  jwtIssuer: string | undefined;
  /** Origins (comma-separated) an e-mail sign-in link may redirect to, e.g. the frontend. */
  signInRedirectOrigins: string | undefined;
  /** Address subscribed to the alarm topic. */
  alarmEmail: string | undefined;
  /** Successful sign-ins a key and user may make at once (`SIGN_IN_BURST`). */
  signInBurst: string | undefined;
  /** The tool repository over HTTPS, `{repository}` standing for the team's name (`TOOL_REPOSITORY_URL`). */
  toolRepositoryUrl: string | undefined;
  /** Each organization's web app at `{org_id}.{domain}`, served by CloudFront; absent: only under the API. */
  frontend: FrontendSettings | undefined;
  /**
   * The share of API requests traced with X-Ray, 0 to 1 (`tracingSampleRate`, default
   * {@link defaultTracingSampleRate}): API Gateway samples by the stage's sampling rule and the
   * functions trace what it sampled; 0 turns tracing off.
   */
  tracingSampleRate: number;
  /**
   * OpenTelemetry traces in the GenAI conventions instead of the Powertools X-Ray tracer
   * (`tracing`, `infra/constructs/tracing.ts`, docs/observability.md): `xray` through the ADOT
   * collector layer, `otlp` to CloudWatch's OTLP endpoint with Transaction Search; absent, the
   * Powertools tracer. Either samples `tracingSampleRate` of the requests no caller's trace decides.
   */
  tracing: TracingExport | undefined;
  /**
   * Whether `tracing=otlp` turns Transaction Search on (`transactionSearch`, default true): false for
   * an account and region where it is on already, which a second configuration would fail on.
   */
  transactionSearch: boolean;
  /**
   * A deployment made before the table's indexes held only keys upgrades one step per deployment
   * (`indexUpgradeStep`, 1 to 13, `infra/constructs/data-store.ts`); none: the keys-only indexes.
   */
  indexUpgradeStep: number | undefined;
  /** Polly's engine for the speech functions (`pollyEngine`, `SPEECH_POLLY_ENGINE`); absent: neural, the adapter's default. */
  pollyEngine: 'neural' | 'standard' | undefined;
  /**
   * Where live voice sessions run (`voiceSessionHosting`): `fargate` (the default: an ECS service
   * both browsers and Twilio reach), `agentcore` (an AgentCore runtime besides, for SigV4 clients)
   * or `none` (no live voice: no talk mode in the web app, calls to numbers are not taken, and
   * nothing runs while idle). README "Deploying" says why the default.
   */
  voiceSessionHosting: 'fargate' | 'agentcore' | 'none';
}

/** 5 % of requests traced: at $5 per million traces, a trace per conversation request cost more than its DynamoDB reads. */
export const defaultTracingSampleRate = 0.05;

export interface FrontendSettings {
  /** e.g. `app.example.com` (`frontendDomain`). */
  domain: string;
  /** The Route 53 hosted zone the organizations' records go in (`frontendHostedZoneId`). */
  hostedZoneId: string;
  /** An ACM certificate in us-east-1 (CloudFront's region) for `*.{domain}` (`frontendCertificateArn`). */
  certificateArn: string;
}

export interface PlatformSettings extends DeploymentSettings {
  regions: string[];
}

const regionPattern = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/;
const stagePattern = /^[a-z][a-z0-9-]{0,15}$/;
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const invalid = (key: string, expected: string, value: unknown): Error =>
  new Error(`Invalid CDK context "${key}": expected ${expected}, got ${JSON.stringify(value)}`);

const text = (node: Node, key: string, pattern: RegExp, expected: string, fallback?: string): string => {
  const value: unknown = node.tryGetContext(key) ?? fallback;
  if (typeof value !== 'string' || !pattern.test(value)) throw invalid(key, expected, value);
  return value;
};

const optionalText = (node: Node, key: string): string | undefined => {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw invalid(key, 'a non-empty string', value);
  return value;
};

/** A number from cdk.json or text from `-c key=30`, kept as the text an environment variable holds. */
const optionalPositiveInteger = (node: Node, key: string): string | undefined => {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  if (!/^[1-9]\d{0,5}$/.test(String(value))) throw invalid(key, 'a positive integer', value);
  return String(value);
};

/** A price table: an object in cdk.json or JSON text from `-c llmPrices=...`, checked and kept as JSON text. */
const optionalPriceTable = (node: Node, key: string): string | undefined => {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  const json = typeof value === 'string' ? value : JSON.stringify(value);
  try {
    parsePriceTable(json);
  } catch (error) {
    throw invalid(key, `a price table per model id (${(error as Error).message})`, value);
  }
  return json;
};

/** A share from 0 to 1: a number in cdk.json or text from `-c key=0.1`. */
const share = (node: Node, key: string, fallback: number): number => {
  const value: unknown = node.tryGetContext(key) ?? fallback;
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number) || number < 0 || number > 1)
    throw invalid(key, 'a number from 0 to 1', value);
  return number;
};

/** A step of the index upgrade, 1 to 13: a number in cdk.json or text from `-c key=3`. */
const upgradeStep = (node: Node, key: string): number | undefined => {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  if (!/^([1-9]|1[0-3])$/.test(String(value))) throw invalid(key, 'a step from 1 to 13', value);
  return Number(value);
};

/** One of a few words, from cdk.json or `-c key=word`; absent: undefined. */
const optionalChoice = <Choice extends string>(
  node: Node,
  key: string,
  choices: readonly Choice[],
): Choice | undefined => {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  if (!choices.includes(value as Choice)) throw invalid(key, `one of ${choices.join(', ')}`, value);
  return value as Choice;
};

/** `-c key=true` arrives as a string, cdk.json values as JSON. */
const bool = (node: Node, key: string): boolean => {
  const value: unknown = node.tryGetContext(key) ?? false;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw invalid(key, 'true or false', value);
};

/** A JSON array from cdk.json, or a comma-separated list from `-c regions=a,b`. */
const regionList = (node: Node): string[] => {
  const value: unknown = node.tryGetContext('regions');
  const list = typeof value === 'string' ? value.split(',').map((region) => region.trim()) : value;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    !list.every((region): region is string => typeof region === 'string' && regionPattern.test(region))
  ) {
    throw invalid('regions', 'a non-empty list of AWS region names such as ["eu-central-1"]', value);
  }
  if (new Set(list).size !== list.length) throw invalid('regions', 'distinct regions', value);
  return list;
};

const domainPattern = /^(?=.{1,200}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** The frontend hosting: all three keys with `frontendDomain`, none without it; one region only. */
const frontendSettings = (node: Node, regions: string[]): FrontendSettings | undefined => {
  if (node.tryGetContext('frontendDomain') === undefined) {
    for (const key of ['frontendHostedZoneId', 'frontendCertificateArn'])
      if (node.tryGetContext(key) !== undefined)
        throw invalid(key, 'to be set only with frontendDomain', node.tryGetContext(key));
    return undefined;
  }
  // The wildcard name can belong to one distribution, and organizations' records to one API.
  if (regions.length !== 1) throw invalid('regions', 'a single region when frontendDomain is set', regions);
  return {
    domain: text(node, 'frontendDomain', domainPattern, 'a lowercase DNS name such as "app.example.com"'),
    hostedZoneId: text(node, 'frontendHostedZoneId', /^Z[A-Z0-9]{1,31}$/, 'a Route 53 hosted zone id'),
    certificateArn: text(
      node,
      'frontendCertificateArn',
      /^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate\/[A-Za-z0-9-]+$/,
      'the ARN of an ACM certificate in us-east-1',
    ),
  };
};

/** Reads and validates the app's context; throws on the first bad key. */
export const readPlatformSettings = (node: Node): PlatformSettings => {
  const stage = text(node, 'stage', stagePattern, 'a lowercase name such as "prod" or "dev"');
  const regions = regionList(node);
  return {
    stage,
    production: stage === 'prod',
    regions,
    rootOrganizationId: text(node, 'rootOrganizationId', /^\S{1,128}$/, 'a non-empty id without spaces'),
    superAdminEmail: text(node, 'superAdminEmail', emailPattern, 'an email address'),
    maintenanceMode: bool(node, 'maintenanceMode'),
    emailFrom: text(node, 'emailFrom', emailPattern, 'an email address', 'no-reply@example.com'),
    llmDefaultProvider: text(node, 'llmDefaultProvider', /^[a-z][a-z0-9-]*$/, 'a provider name', 'deterministic'),
    llmPrices: optionalPriceTable(node, 'llmPrices'),
    jwtIssuer: optionalText(node, 'jwtIssuer'),
    signInRedirectOrigins: optionalText(node, 'signInRedirectOrigins'),
    alarmEmail: optionalText(node, 'alarmEmail'),
    signInBurst: optionalPositiveInteger(node, 'signInBurst'),
    toolRepositoryUrl: optionalText(node, 'toolRepositoryUrl'),
    frontend: frontendSettings(node, regions),
    tracingSampleRate: share(node, 'tracingSampleRate', defaultTracingSampleRate),
    tracing: optionalChoice(node, 'tracing', ['xray', 'otlp']),
    transactionSearch: node.tryGetContext('transactionSearch') === undefined || bool(node, 'transactionSearch'),
    indexUpgradeStep: upgradeStep(node, 'indexUpgradeStep'),
    pollyEngine: optionalChoice(node, 'pollyEngine', ['neural', 'standard']),
    voiceSessionHosting: optionalChoice(node, 'voiceSessionHosting', ['fargate', 'agentcore', 'none']) ?? 'fargate',
  };
};
