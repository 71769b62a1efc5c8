import type { TurnTimings } from '../../events/stream-events';

/** One stage of a turn on its timeline: from and to in milliseconds from the request. */
export interface Stage {
  label: string;
  kind: 'stage' | 'tool' | 'total';
  from: number;
  to: number;
  /** What the stage took, said in words beside its bar. */
  value: string;
}

/** A turn's stages in the order they happen, drawn to the scale of its whole duration. */
export interface StageTimeline {
  totalMs: number;
  stages: Stage[];
  /** Figures of the turn that have no place on the axis (turns stored before offsets were recorded). */
  unplaced: string[];
}

export const milliseconds = (value: number): string => `${Math.round(value).toLocaleString('en-US')} ms`;

/** A stage that takes time: how long. */
const span = (label: string, kind: Stage['kind'], from: number, to: number): Stage => ({
  label,
  kind,
  from,
  to,
  value: milliseconds(to - from),
});

/** A moment of the turn (its first token, clause, audio): when, from the request. */
const moment = (label: string, from: number, to: number, wait?: string): Stage => ({
  label,
  kind: 'stage',
  from,
  to,
  value: `at ${milliseconds(to)}${wait ? ` (${wait})` : ''}`,
});

/**
 * Where a turn's time went, from its recorded timings: recognition (voice input), the model's
 * wait for the agent's first piece, the first clause written and spoken (voice output), the first
 * audio sent, each tool call, and the whole turn. A figure without a recorded start is listed
 * apart rather than drawn at a guessed place.
 */
export const stageTimeline = (timings: TurnTimings): StageTimeline => {
  const stages: Stage[] = [];
  const unplaced: string[] = [];
  const recognition = timings.speech_recognition_ms;
  if (recognition !== undefined) stages.push(span('Recognition', 'stage', 0, recognition));
  const firstToken = timings.first_token_ms;
  const modelWait = timings.model_first_token_ms;
  if (firstToken !== undefined && modelWait !== null)
    stages.push(
      moment('Model first token', Math.max(0, firstToken - modelWait), firstToken, `waited ${milliseconds(modelWait)}`),
    );
  else if (modelWait !== null) unplaced.push(`model first token ${milliseconds(modelWait)}`);
  const firstClause = timings.first_clause_ms;
  if (firstClause !== undefined) stages.push(moment('First clause', firstToken ?? 0, firstClause));
  const firstAudio = timings.first_audio_ms;
  const synthesis = timings.speech_synthesis_ms;
  if (firstAudio !== undefined && firstClause !== undefined)
    stages.push({
      ...span('Synthesis', 'stage', firstClause, firstAudio),
      value: `${milliseconds(firstAudio - firstClause)}${synthesis === undefined ? '' : ` (${milliseconds(synthesis)} in all)`}`,
    });
  else if (synthesis !== undefined) unplaced.push(`synthesis ${milliseconds(synthesis)} in all`);
  if (firstAudio !== undefined) stages.push(moment('First audio', firstAudio, firstAudio));
  for (const call of timings.tool_calls) {
    if (call.at_ms === undefined) unplaced.push(`tool ${call.name} ${milliseconds(call.ms)}`);
    else
      stages.push({
        ...span(`Tool ${call.name}`, 'tool', call.at_ms, call.at_ms + call.ms),
        value: `${milliseconds(call.ms)}, at ${milliseconds(call.at_ms)}`,
      });
  }
  stages.push(span('Whole turn', 'total', 0, timings.total_ms));
  return { totalMs: Math.max(timings.total_ms, ...stages.map((stage) => stage.to)), stages, unplaced };
};
