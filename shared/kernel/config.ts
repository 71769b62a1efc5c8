/**
 * Deployment settings read from the environment. Required values throw when read while
 * missing. What every function needs is read when its module loads (`requireFunctionSettings`),
 * so a misconfigured function fails its cold start rather than some later request; settings
 * only some operations use (the bucket, queue URLs) fail on first use.
 */
const required = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`environment variable ${name} is not set`);
  return value;
};

/** A positive number of seconds from the environment, else `fallback`. */
const positiveSeconds = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};

const positiveInteger = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  return Number.isInteger(value) && value > 0 ? value : fallback;
};

const flag = (name: string): boolean => ['1', 'true', 'yes', 'on'].includes((process.env[name] ?? '').toLowerCase());

export const config = {
  get tableName(): string {
    return required('TABLE_NAME');
  },
  get artifactBucket(): string {
    return required('ARTIFACT_BUCKET');
  },
  /** The analytics lake: the organizations' records as Parquet, fed by the table's stream. */
  get lakeBucket(): string {
    return required('LAKE_BUCKET');
  },
  /**
   * The role the SQL query assumes to read one organization's lake folder (tagged with it). Unset
   * locally: the local S3 has no IAM, and the engine's allowed directories confine the query.
   */
  get lakeReaderRoleArn(): string | undefined {
    return process.env.LAKE_READER_ROLE_ARN || undefined;
  },
  /** Where the SQL query keeps its local copy of the organizations' lake files (Lambda: /tmp). */
  get lakeCacheDir(): string | undefined {
    return process.env.LAKE_CACHE_DIR || undefined;
  },
  queueUrl(envName: string): string {
    return required(envName);
  },
  /** Maintenance mode is a deployment setting: every operation but ping answers 503. */
  get maintenanceMode(): boolean {
    return flag('MAINTENANCE_MODE');
  },
  /** The bootstrap organization, from which new organizations are created. */
  get rootOrganizationId(): string {
    return process.env.ROOT_ORG_ID ?? 'local';
  },
  get superAdminEmail(): string {
    return process.env.SUPER_ADMIN_EMAIL ?? 'admin@example.com';
  },
  /** s3rver and other local S3 servers need path-style addressing. */
  get s3ForcePathStyle(): boolean {
    return flag('S3_FORCE_PATH_STYLE');
  },
  /**
   * How many successful sign-ins one key and user may make at once. SDK clients sign in each
   * time they are created, so a test suite or a fleet of workers starts many in a minute.
   */
  /** A live voice session in which no one speaks for this long is closed (`VOICE_SESSION_IDLE_SECONDS`, default 30). */
  get voiceSessionIdleMs(): number {
    return positiveSeconds('VOICE_SESSION_IDLE_SECONDS', 30) * 1000;
  },
  /** A live voice session lasts this long at most (`VOICE_SESSION_MAX_SECONDS`, default an hour). */
  get voiceSessionMaxMs(): number {
    return positiveSeconds('VOICE_SESSION_MAX_SECONDS', 3_600) * 1000;
  },
  /** An utterance ends, as if its speaker stopped, once it is this long (`VOICE_UTTERANCE_MAX_SECONDS`, default 30). */
  get voiceUtteranceMaxMs(): number {
    return positiveSeconds('VOICE_UTTERANCE_MAX_SECONDS', 30) * 1000;
  },
  /** Live voice sessions one user may hold at once, across all servers (`VOICE_SESSIONS_PER_USER`, default 10). */
  get voiceSessionsPerUser(): number {
    return positiveInteger('VOICE_SESSIONS_PER_USER', 10);
  },
  /** Live voice sessions one organization may hold at once, across all servers (`VOICE_SESSIONS_PER_ORGANIZATION`, default 100). */
  get voiceSessionsPerOrganization(): number {
    return positiveInteger('VOICE_SESSIONS_PER_ORGANIZATION', 100);
  },
  get signInBurst(): number {
    const value = Number(process.env.SIGN_IN_BURST ?? 30);
    if (!Number.isInteger(value) || value < 1)
      throw new Error('environment variable SIGN_IN_BURST must be a positive integer');
    return value;
  },
  /**
   * How long a conversation's lease holds past its holder's last renewal (renewed every third of
   * it): a conversation whose turn died is free again this long after. 30 s; tests shorten it.
   */
  get conversationLeaseMs(): number {
    const value = Number(process.env.CONVERSATION_LEASE_MS ?? 30_000);
    if (!Number.isInteger(value) || value < 1_000 || value > 300_000)
      throw new Error('environment variable CONVERSATION_LEASE_MS must be an integer from 1000 to 300000');
    return value;
  },
  /**
   * How long a user's turn waits for the reply of the operator holding the conversation: 20 s, at
   * most a minute (well within the streamed function's timeout); tests shorten it.
   */
  get operatorReplyWaitMs(): number {
    const value = Number(process.env.OPERATOR_REPLY_WAIT_MS ?? 20_000);
    if (!Number.isInteger(value) || value < 1 || value > 60_000)
      throw new Error('environment variable OPERATOR_REPLY_WAIT_MS must be an integer from 1 to 60000');
    return value;
  },
  /**
   * How long a SQL query may run. The spec gives 30 s, but a buffered answer must leave API
   * Gateway's 29 s limit room for copying the organization's lake files, so 25 s (tests shorten it further).
   */
  get sqlQueryTimeoutMs(): number {
    const value = Number(process.env.SQL_QUERY_TIMEOUT_MS ?? 25_000);
    if (!Number.isInteger(value) || value < 1)
      throw new Error('environment variable SQL_QUERY_TIMEOUT_MS must be a positive integer');
    return value;
  },
  /**
   * How much one organization's SQL query may spill to disk (MiB), in the organization's own folder:
   * with the lake files' copies (2 GiB at most) it stays inside the query function's 4 GiB of /tmp,
   * so no organization's query can fill the space that holds the others' copies.
   */
  get sqlSpillLimitMb(): number {
    const value = Number(process.env.SQL_SPILL_LIMIT_MB ?? 1024);
    if (!Number.isInteger(value) || value < 1)
      throw new Error('environment variable SQL_SPILL_LIMIT_MB must be a positive integer');
    return value;
  },
  /**
   * Local development only: webhook destinations may use http:// and loopback addresses, so a
   * developer can receive on their laptop. Never set in AWS (the stack does not set it).
   */
  get webhookAllowLocalDestinations(): boolean {
    return flag('WEBHOOK_ALLOW_LOCAL_DESTINATIONS');
  },
  /**
   * Local development only: MCP servers may be reached over http:// and on loopback addresses, so a
   * developer can register one running on their machine. Never set in AWS (the stack does not set it).
   */
  get mcpAllowLocalServers(): boolean {
    return flag('MCP_ALLOW_LOCAL_SERVERS');
  },
  /** The first webhook retry waits about this long; each next one twice as long (with jitter). */
  get webhookRetryBaseSeconds(): number {
    const value = Number(process.env.WEBHOOK_RETRY_BASE_SECONDS ?? 30);
    if (!Number.isFinite(value) || value < 0 || value > 900)
      throw new Error('environment variable WEBHOOK_RETRY_BASE_SECONDS must be from 0 to 900');
    return value;
  },
  /** How long a webhook destination has to answer one attempt; a worker holds the attempt for twice as long. */
  get webhookDeliveryTimeoutMs(): number {
    const value = Number(process.env.WEBHOOK_DELIVERY_TIMEOUT_SECONDS ?? 10);
    if (!Number.isFinite(value) || value < 1 || value > 60)
      throw new Error('environment variable WEBHOOK_DELIVERY_TIMEOUT_SECONDS must be from 1 to 60');
    return value * 1000;
  },
  /** `app.example.com` when the CDN serves each organization's web app at `{org_id}.app.example.com`. */
  get frontendDomain(): string | undefined {
    return process.env.FRONTEND_DOMAIN || undefined;
  },
  /**
   * The platform's public address (`PUBLIC_BASE_URL`): what e-mailed links (sign-in, verification)
   * point at, never the Host a request names, which whoever sends the request chooses. The stack
   * sets its API's URL (`https://{api}.execute-api.{region}.amazonaws.com/{stage}`); `npm start`
   * the local gateway's own.
   */
  get publicBaseUrl(): string {
    const value = required('PUBLIC_BASE_URL').replace(/\/+$/, '');
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
      throw new Error('environment variable PUBLIC_BASE_URL must be an http(s) URL');
    return value;
  },
  /**
   * The API's address as clients configure it (`https://api.example.com`), when a proxy or CDN in
   * front of the API does not pass on the host it was addressed by: Twilio signs the URL it called.
   */
  get publicApiBaseUrl(): string | undefined {
    return process.env.PUBLIC_API_BASE_URL?.replace(/\/+$/, '') || undefined;
  },
  /**
   * Where the voice session sockets are served (`VOICE_SESSION_URL`): `wss://voice.example.com`
   * (the stack sets it to its voice session host); unset (undefined), the API's own host (`npm
   * start` serves both on one port); `none` (null), nowhere (`voiceSessionHosting=none`): the web
   * app offers no talk mode and calls to the organization's numbers are not taken.
   */
  get voiceSessionUrl(): string | null | undefined {
    const value = process.env.VOICE_SESSION_URL?.replace(/\/+$/, '');
    if (value === 'none') return null;
    return value || undefined;
  },
  /**
   * Twilio's REST API (`TWILIO_API_BASE_URL`, default `https://api.twilio.com`): outbound calls are
   * placed and live calls updated there. Tests and the bench point it at a stand-in that answers as
   * Twilio documents.
   */
  get twilioApiBaseUrl(): string {
    const value = (process.env.TWILIO_API_BASE_URL || 'https://api.twilio.com').replace(/\/+$/, '');
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
      throw new Error('environment variable TWILIO_API_BASE_URL must be an http(s) URL');
    return value;
  },
  /** How long a request to Twilio's REST API may take before the call is recorded failed (`TWILIO_API_TIMEOUT_SECONDS`, 10). */
  get twilioApiTimeoutMs(): number {
    const value = Number(process.env.TWILIO_API_TIMEOUT_SECONDS ?? 10);
    if (!Number.isFinite(value) || value <= 0 || value > 20)
      throw new Error('environment variable TWILIO_API_TIMEOUT_SECONDS must be more than 0 and at most 20');
    return value * 1000;
  },
  /** Outbound calls an organization may place a minute, whoever places them (`OUTBOUND_CALLS_PER_MINUTE`, 30). */
  get outboundCallsPerMinute(): number {
    const value = Number(process.env.OUTBOUND_CALLS_PER_MINUTE ?? 30);
    return Number.isInteger(value) && value > 0 ? value : 30;
  },
  /** Outbound calls an organization may have under way at once, ringing or talking (`OUTBOUND_CALLS_AT_ONCE`, 10). */
  get outboundCallsAtOnce(): number {
    const value = Number(process.env.OUTBOUND_CALLS_AT_ONCE ?? 10);
    return Number.isInteger(value) && value > 0 ? value : 10;
  },
  /**
   * An answered outbound call's agent speaks first after this much silence, unless the callee
   * speaks (or presses a key) first (`OUTBOUND_CALL_OPENING_SILENCE_MS`, 1500).
   */
  get outboundCallOpeningSilenceMs(): number {
    const value = Number(process.env.OUTBOUND_CALL_OPENING_SILENCE_MS ?? 1_500);
    return Number.isInteger(value) && value >= 0 && value <= 30_000 ? value : 1_500;
  },
  get region(): string {
    return process.env.AWS_REGION ?? 'us-east-1';
  },
} as const;

/**
 * Reads the settings every function needs. The HTTP handlers call it when they are built, at
 * module load; importing the route table or the schemas reads no setting.
 */
export const requireFunctionSettings = (): void => {
  required('TABLE_NAME');
};
