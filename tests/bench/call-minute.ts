import { awsPrices, telephonyPrices } from './aws-prices';
import type { ConversationCost, LineItem } from './cost-pricing';

/**
 * What a minute of a live call (the phone or browser voice session) costs in AWS, LLM excluded:
 * the session's compute, Amazon Transcribe streaming, Polly and the table's writes. The turn's
 * figures are the voice conversation's, counted by the cost bench (the socket runs the same turn
 * engine, which stores the same items and speaks the same texts); what a minute holds follows
 * from the speech in it:
 *
 * - the caller's words last as long as the bench's recordings of them, the agent's as Polly reads
 *   its characters ({@link agentCharactersPerSecond}), and each turn waits {@link turnGapSeconds}
 *   (the end-of-turn silence window and the time to the first audio);
 * - Transcribe hears the whole minute: a call streams its audio, silence included, for as long as it lasts;
 * - the session's compute is that of the hosting the stack deploys (`voiceSessionHosting`): a share
 *   of a Fargate task, which holds several calls, or AgentCore's microVM per session, billed for
 *   its memory throughout and its CPU while active.
 */

/** Polly's voices at their default rate read about 150 words a minute: 15 characters a second. */
export const agentCharactersPerSecond = 15;
/** The silence that ends a turn (300 ms by default) and the time to the first audio (the 500 ms target), about a second. */
export const turnGapSeconds = 1;

/** The session container's size and how many calls one holds (`infra/constructs/voice-sessions.ts`). */
export interface SessionHosting {
  hosting: 'fargate' | 'agentcore';
  vcpu: number;
  memoryGb: number;
  /** Fargate: the calls a task holds at its scaling target. */
  callsPerTask: number;
  /** AgentCore: the share of its vCPU a session keeps busy (encoding, voice activity detection, events). */
  activeCpuShare: number;
}

export interface CallMinute {
  items: LineItem[];
  usd: number;
  turnsPerMinute: number;
  hosting: SessionHosting['hosting'];
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

/** The session compute of a minute of one call. */
export const sessionComputeMinute = (host: SessionHosting): LineItem => {
  if (host.hosting === 'fargate') {
    const taskMinute =
      (host.vcpu * awsPrices.fargateArmVcpuHour.usd + host.memoryGb * awsPrices.fargateArmGbHour.usd) / 60;
    return {
      service: 'Fargate',
      what: `a share of a task (${host.vcpu} vCPU, ${host.memoryGb} GB, arm64) holding ${host.callsPerTask} calls`,
      quantity: 1 / host.callsPerTask,
      unit: 'task-minutes',
      usd: taskMinute / host.callsPerTask,
    };
  }
  const cpu = (host.activeCpuShare * host.vcpu * awsPrices.agentCoreVcpuHour.usd) / 60;
  const memory = (host.memoryGb * awsPrices.agentCoreGbHour.usd) / 60;
  return {
    service: 'AgentCore',
    what: `the session's microVM (${host.memoryGb} GB throughout, ${host.activeCpuShare * 100}% of ${host.vcpu} vCPU active)`,
    quantity: 1,
    unit: 'minutes',
    usd: cpu + memory,
  };
};

/** Prices one minute of a live call from the measured voice conversation (`userTurns` of the caller's). */
export const priceCallMinute = (
  voice: ConversationCost,
  userTurns: number,
  pollyRequestsPerText: number,
  host: SessionHosting,
): CallMinute => {
  const speech = voice.usage.speech ?? { synthesizedCharacters: [], transcribedMs: [] };
  const callerSeconds = sum(speech.transcribedMs) / 1000 / userTurns;
  // The agent speaks first, then answers each turn: its characters shared over the caller's turns.
  const agentCharacters = sum(speech.synthesizedCharacters) / userTurns;
  const turnSeconds = callerSeconds + agentCharacters / agentCharactersPerSecond + turnGapSeconds;
  const turnsPerMinute = 60 / turnSeconds;
  const items: LineItem[] = [
    sessionComputeMinute(host),
    {
      service: 'Transcribe',
      what: 'streaming the call’s audio, silence included',
      quantity: 60,
      unit: 'seconds',
      usd: 60 * awsPrices.transcribeStreamingSecond.usd,
    },
    {
      service: 'Polly',
      what: `neural characters (${agentCharacters.toFixed(0)} a turn × ${pollyRequestsPerText} request(s) per text)`,
      quantity: agentCharacters * turnsPerMinute * pollyRequestsPerText,
      unit: 'characters',
      usd: agentCharacters * turnsPerMinute * pollyRequestsPerText * awsPrices.pollyNeuralCharacter.usd,
    },
    {
      service: 'DynamoDB',
      what: `write units (${(voice.writes / userTurns).toFixed(0)} a turn: its messages, events, interaction, analysis)`,
      quantity: (voice.writes / userTurns) * turnsPerMinute,
      unit: 'WRU',
      usd: (voice.writes / userTurns) * turnsPerMinute * awsPrices.dynamodbWriteUnit.usd,
    },
  ];
  return { items, usd: sum(items.map((item) => item.usd)), turnsPerMinute, hosting: host.hosting };
};

/** A minute of a phone call: the live call's minute (the stack's default hosting) and what Twilio adds to it. */
export interface PhoneCallMinute {
  direction: 'inbound' | 'outbound';
  hosting: SessionHosting['hosting'];
  items: LineItem[];
  usd: number;
  /** What the call costs once, whatever its length: an outbound call's answering machine detection. */
  perCall: LineItem[];
}

/**
 * An inbound and an outbound minute of a phone call: the live call's minute plus the carrier's
 * minute at Twilio's US list price (`telephonyPrices`), and, once per outbound call, its
 * answering machine detection. The calls' callbacks to the API (a few requests a call) are left out.
 */
export const pricePhoneCallMinutes = (minute: CallMinute): PhoneCallMinute[] =>
  (['inbound', 'outbound'] as const).map((direction) => {
    const carrier =
      direction === 'inbound' ? telephonyPrices.twilioInboundLocalMinute : telephonyPrices.twilioOutboundMinute;
    const items: LineItem[] = [
      ...minute.items,
      { service: 'Twilio', what: carrier.per, quantity: 1, unit: 'minutes', usd: carrier.usd },
    ];
    const amd = telephonyPrices.twilioAnsweringMachineDetection;
    return {
      direction,
      hosting: minute.hosting,
      items,
      usd: sum(items.map((item) => item.usd)),
      perCall:
        direction === 'outbound'
          ? [{ service: 'Twilio', what: amd.per, quantity: 1, unit: 'calls', usd: amd.usd }]
          : [],
    };
  });
