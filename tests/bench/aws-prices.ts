/**
 * AWS list prices in us-east-1 (US East, N. Virginia), on-demand, first tier, free tiers not
 * applied: what the cost bench (`npm run bench -- cost`) multiplies its counts by. Taken on
 * 2026-11-27 from the AWS pricing pages named beside each price (`source`); where the page itself
 * could not be read, the figure was checked against the secondary sources named, and `confirmed`
 * says so. Change a price here and every figure of the bench and of the README's "What it costs"
 * follows (`npm run bench -- cost --write-readme`).
 */
export interface Price {
  usd: number;
  per: string;
  source: string;
  /** false: taken from secondary sources or estimated, not read on the AWS page itself. */
  confirmed: boolean;
  note?: string;
}

const page = (service: string) => `https://aws.amazon.com/${service}/pricing/`;

export const pricesTakenOn = '2026-11-27';

export const awsPrices = {
  dynamodbWriteUnit: {
    usd: 0.625 / 1e6,
    per: 'write request unit (on-demand, since the 50% cut of 2024-11-01)',
    source: page('dynamodb'),
    confirmed: false,
    note: 'the AWS page renders its prices from a script; $0.625 per million WRU as quoted by airbyte.com and jusdb.com (2025)',
  },
  dynamodbReadUnit: {
    usd: 0.125 / 1e6,
    per: 'read request unit (on-demand)',
    source: page('dynamodb'),
    confirmed: false,
    note: 'as the write unit',
  },
  dynamodbStorageGbMonth: {
    usd: 0.25,
    per: 'GB-month of table storage (Standard table class), indexes included',
    source: page('dynamodb'),
    confirmed: false,
  },
  dynamodbBackupGbMonth: {
    usd: 0.2,
    per: 'GB-month of point-in-time recovery (continuous backups)',
    source: page('dynamodb'),
    confirmed: false,
  },
  s3Put: {
    usd: 0.005 / 1000,
    per: 'PUT, COPY, POST or LIST request (S3 Standard)',
    source: page('s3'),
    confirmed: false,
  },
  s3Get: {
    usd: 0.0004 / 1000,
    per: 'GET, HEAD and other requests (S3 Standard)',
    source: page('s3'),
    confirmed: false,
  },
  s3StorageGbMonth: { usd: 0.023, per: 'GB-month (S3 Standard, first 50 TB)', source: page('s3'), confirmed: false },
  sqsRequest: {
    usd: 0.4 / 1e6,
    per: 'request (standard queue; each 64 KB of a payload is a request)',
    source: page('sqs'),
    confirmed: false,
  },
  lambdaRequest: { usd: 0.2 / 1e6, per: 'invocation', source: page('lambda'), confirmed: true },
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    per: 'GB-second on arm64 (first 7.5 billion GB-s a month)',
    source: page('lambda'),
    confirmed: false,
    note: 'checked against cloudchipr.com and the Lambda documentation examples; x86_64 is $0.0000166667',
  },
  lambdaX86GbSecond: { usd: 0.0000166667, per: 'GB-second on x86_64', source: page('lambda'), confirmed: false },
  apiGatewayRestRequest: {
    usd: 3.5 / 1e6,
    per: 'REST API request (first 333 million a month)',
    source: page('api-gateway'),
    confirmed: true,
    note: 'also in the AWS whitepaper "Best Practices for Designing Amazon API Gateway Private APIs", table 4',
  },
  dataTransferOutGb: {
    usd: 0.09,
    per: 'GB out to the internet (first 10 TB a month, after the first 100 GB free)',
    source: 'https://aws.amazon.com/ec2/pricing/on-demand/#Data_Transfer',
    confirmed: false,
  },
  logsIngestedGb: {
    usd: 0.5,
    per: 'GB of CloudWatch Logs ingested (Standard log class)',
    source: page('cloudwatch'),
    confirmed: false,
    note: 'as quoted by factualminds.com, signoz.io and cloudburn.io (2026)',
  },
  logsStoredGbMonth: { usd: 0.03, per: 'GB-month of logs archived', source: page('cloudwatch'), confirmed: false },
  xrayTraceRecorded: {
    usd: 5 / 1e6,
    per: 'trace recorded',
    source: page('xray'),
    confirmed: true,
    note: 'the first 100,000 a month are free',
  },
  pollyNeuralCharacter: { usd: 16 / 1e6, per: 'character, neural voices', source: page('polly'), confirmed: false },
  pollyStandardCharacter: { usd: 4 / 1e6, per: 'character, standard voices', source: page('polly'), confirmed: false },
  transcribeStreamingSecond: {
    usd: 0.024 / 60,
    per: 'second of streaming audio (Tier 1, $0.024 a minute), billed per second with a 15-second minimum per request',
    source: page('transcribe'),
    confirmed: false,
    note: 'the 15-second minimum is the one the Transcribe page states for batch and streaming alike',
  },
  cloudwatchAlarmMonth: {
    usd: 0.1,
    per: 'standard-resolution alarm metric per month',
    source: page('cloudwatch'),
    confirmed: false,
  },
  cloudwatchDashboardMonth: {
    usd: 3,
    per: 'dashboard per month (3 of up to 50 metrics free per account)',
    source: page('cloudwatch'),
    confirmed: true,
  },
  secretMonth: { usd: 0.4, per: 'secret per month', source: page('secrets-manager'), confirmed: false },
  kmsKeyMonth: { usd: 1, per: 'customer managed KMS key per month', source: page('kms'), confirmed: false },
  fargateArmVcpuHour: {
    usd: 0.03238,
    per: 'vCPU-hour of an ECS Fargate task, Linux/ARM (per second, 1-minute minimum)',
    source: 'https://aws.amazon.com/fargate/pricing/',
    confirmed: false,
    note: 'Linux/x86 is $0.04048; ARM is 20% less',
  },
  fargateArmGbHour: {
    usd: 0.00356,
    per: 'GB-hour of an ECS Fargate task, Linux/ARM',
    source: 'https://aws.amazon.com/fargate/pricing/',
    confirmed: false,
  },
  agentCoreVcpuHour: {
    usd: 0.0895,
    per: 'vCPU-hour of AgentCore Runtime, per second, only while the CPU is active (I/O waits are free)',
    source: 'https://aws.amazon.com/bedrock/agentcore/pricing/',
    confirmed: false,
    note: 'as quoted by elliot-digital.co.uk and factualminds.com (2026)',
  },
  agentCoreGbHour: {
    usd: 0.00945,
    per: 'GB-hour of AgentCore Runtime memory, per second, at the session peak',
    source: 'https://aws.amazon.com/bedrock/agentcore/pricing/',
    confirmed: false,
    note: 'as the vCPU-hour',
  },
  publicIpv4Hour: {
    usd: 0.005,
    per: 'in-use public IPv4 address-hour (a load balancer has one per zone, a task with a public IP one)',
    source: 'https://aws.amazon.com/vpc/pricing/',
    confirmed: false,
  },
  albHour: {
    usd: 0.0225,
    per: 'Application Load Balancer-hour',
    source: 'https://aws.amazon.com/elasticloadbalancing/pricing/',
    confirmed: false,
  },
  albLcuHour: {
    usd: 0.008,
    per: 'load balancer capacity unit-hour (an idle ALB bills at least one LCU)',
    source: 'https://aws.amazon.com/elasticloadbalancing/pricing/',
    confirmed: false,
  },
  sqsIdlePollsPerQueueMonth: {
    usd: 648_000 * (0.4 / 1e6),
    per: 'queue consumed by a Lambda event source mapping, per month, while idle',
    source: 'https://aws.amazon.com/premiumsupport/knowledge-center/sqs-high-charges/',
    confirmed: false,
    note: 'an estimate: the knowledge-center article says a mapping long-polls an idle queue and its empty receives are billed, but not how often; assumed 5 pollers, each a 20-second long poll (648,000 requests a month)',
  },
} as const satisfies Record<string, Price>;

/**
 * The hosted voice platforms' published per-minute fees, beside which the README puts a minute of
 * a live call here: what they charge on top of the model, and (Vapi) of speech and telephony.
 */
export const hostedVoicePlatformPrices = {
  vapiPlatformMinute: {
    usd: 0.05,
    per: 'minute, Vapi platform fee (speech, model and telephony billed on top)',
    source: 'https://vapi.ai/pricing',
    confirmed: false,
  },
  retellVoiceEngineMinute: {
    usd: 0.07,
    per: 'minute, Retell voice engine, from (the model and telephony billed on top)',
    source: 'https://www.retellai.com/pricing',
    confirmed: false,
  },
} as const satisfies Record<string, Price>;

/**
 * What the speech engines other than Amazon's charge, for docs/cost.md and the README: the
 * OpenAI-compatible adapter's defaults (`SPEECH_OPENAI_MODEL` tts-1, `SPEECH_OPENAI_TRANSCRIPTION_MODEL`
 * whisper-1) at OpenAI's list prices; a self-hosted server costs what it runs on.
 */
export const otherSpeechPrices = {
  openAiTts1Character: {
    usd: 15 / 1e6,
    per: 'character (tts-1)',
    source: 'https://openai.com/api/pricing/',
    confirmed: false,
  },
  openAiWhisperMinute: {
    usd: 0.006,
    per: 'minute of audio (whisper-1), billed per second, no minimum',
    source: 'https://openai.com/api/pricing/',
    confirmed: false,
  },
} as const satisfies Record<string, Price>;

/** When the telephony prices below were taken. */
export const telephonyPricesTakenOn = '2026-11-29';

/**
 * Twilio's US list prices (pay as you go, before volume discounts) that a phone call adds to its
 * minute here: the carrier's minute, inbound to a local number or outbound to a US number, and an
 * outbound call's asynchronous answering machine detection (every outbound call asks for it).
 */
export const telephonyPrices = {
  twilioInboundLocalMinute: {
    usd: 0.0085,
    per: 'minute of an inbound call to a local US number',
    source: 'https://www.twilio.com/en-us/voice/pricing/us',
    confirmed: false,
    note: "the pricing page renders its table from a script; $0.0085 as Twilio's own support article on volume pricing (support.twilio.com/hc/en-us/articles/223183328) and customweb.ai's phone-number page quote it",
  },
  twilioOutboundMinute: {
    usd: 0.014,
    per: 'minute of an outbound call to a US number',
    source: 'https://www.twilio.com/en-us/voice/pricing/us',
    confirmed: false,
    note: "as the pricing page listed it in 2025; Twilio's volume-pricing article's example uses $0.013 (an older rate), resellers quote $0.0147",
  },
  twilioAnsweringMachineDetection: {
    usd: 0.0075,
    per: 'outbound call with answering machine detection',
    source: 'https://www.twilio.com/docs/voice/answering-machine-detection',
    confirmed: true,
  },
} as const satisfies Record<string, Price>;
