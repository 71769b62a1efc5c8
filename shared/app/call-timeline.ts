import type { TimelineEntry, TimelineKind } from '../call/schemas';

/**
 * A call's timeline as the console draws it: one lane per side and one for what happens between
 * them, on the clock of the call's media (the recordings' 0), each entry a bar from its start to
 * its end (an instant, such as a DTMF key or the transfer, a mark).
 */

/** What an entry is, in words. */
export const timelineKindWords: Record<TimelineKind, string> = {
  caller_speech: 'Caller speaks',
  agent_speech: 'Agent speaks',
  turn: 'Turn',
  barge_in: 'Barge-in',
  dtmf: 'Keys pressed',
  transfer: 'Transfer',
  voicemail: 'Voicemail',
  status: 'Status',
};

/** Which lane each kind of entry goes in. */
const laneOf: Record<TimelineKind, 'Caller' | 'Agent' | 'Turns' | 'Events'> = {
  caller_speech: 'Caller',
  dtmf: 'Caller',
  agent_speech: 'Agent',
  voicemail: 'Agent',
  turn: 'Turns',
  barge_in: 'Events',
  transfer: 'Events',
  status: 'Events',
};

export interface LaneMark {
  kind: TimelineKind;
  from: number;
  to: number;
  /** What the mark is, when, and what was said or done: its tooltip and its words for a reader. */
  title: string;
}

export interface CallLane {
  label: string;
  marks: LaneMark[];
}

/** `m:ss.s` from the start of the call's media. */
export const callClock = (ms: number): string => {
  const tenths = Math.round(ms / 100);
  const minutes = Math.floor(tenths / 600);
  const seconds = ((tenths % 600) / 10).toFixed(1).padStart(4, '0');
  return `${minutes}:${seconds}`;
};

/** The span an entry covers, in words: `0:03.2` for an instant, `0:03.2–0:05.0` otherwise. */
export const entrySpan = (entry: Pick<TimelineEntry, 'start_ms' | 'end_ms'>): string =>
  entry.end_ms > entry.start_ms ? `${callClock(entry.start_ms)}–${callClock(entry.end_ms)}` : callClock(entry.start_ms);

/** The call's lanes (only those with an entry, in a fixed order) over its whole length. */
export const callLanes = (entries: readonly TimelineEntry[]): { totalMs: number; lanes: CallLane[] } => {
  const lanes = new Map<string, LaneMark[]>();
  for (const label of ['Caller', 'Agent', 'Turns', 'Events']) lanes.set(label, []);
  for (const entry of entries) {
    lanes.get(laneOf[entry.kind])?.push({
      kind: entry.kind,
      from: entry.start_ms,
      to: Math.max(entry.start_ms, entry.end_ms),
      title: `${timelineKindWords[entry.kind]} ${entrySpan(entry)}${entry.text ? `: ${entry.text}` : ''}`,
    });
  }
  return {
    totalMs: entries.reduce((end, entry) => Math.max(end, entry.end_ms, entry.start_ms), 0),
    lanes: [...lanes].filter(([, marks]) => marks.length > 0).map(([label, marks]) => ({ label, marks })),
  };
};
