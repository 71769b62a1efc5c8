import type { ConversationFigures, Percentiles } from './conversations';
import type { PeerFigures } from './peer';
import type { VoiceFigures } from './voice';

/**
 * Issue 33's table, from whichever of the sections `voice`, `conversations` and `peer` ran:
 * each figure beside its target. The next turn's first token comes from `peer` (ours beside
 * LangGraph's, interleaved), else from `conversations` (no ratio).
 */
export interface LatencyFigures {
  voice?: VoiceFigures;
  conversations?: ConversationFigures;
  peer?: PeerFigures;
}

interface Row {
  figure: string;
  measured: string;
  target: string;
  met: boolean | undefined;
}

const ms = (value: number) => `${value.toFixed(value < 100 ? 1 : 0)} ms`;

export const printLatencyTargets = (figures: LatencyFigures): boolean => {
  const rows: Row[] = [];
  const within = (figure: string, value: Percentiles | undefined, pick: 'p50' | 'p99', limit: number) => {
    if (value) rows.push({ figure, measured: ms(value[pick]), target: `≤ ${limit} ms`, met: value[pick] <= limit });
  };
  const voice = figures.voice;
  within('voice in, first audio, p50', voice?.voiceIn?.firstAudio, 'p50', 500);
  within('voice in, first audio, p99', voice?.voiceIn?.firstAudio, 'p99', 800);
  within('text in, first audio, p50', voice?.textIn.firstAudio, 'p50', 120);
  within('the greeting sent back ten times, first audio, p50', voice?.greetingEcho?.firstAudio, 'p50', 500);
  const peer = figures.peer?.available ? figures.peer : undefined;
  if (peer) {
    const ours = peer.ours.next.firstToken.p50;
    const ratio = ours / peer.peer.next.firstToken.p50;
    rows.push({
      figure: 'next turn, first token, p50',
      measured: `${ms(ours)} (${ratio.toFixed(2)}× LangGraph's)`,
      target: '≤ 40 ms, ≤ 0.7×',
      met: ours <= 40 && ratio <= 0.7,
    });
  } else if (figures.conversations) {
    const ours = figures.conversations.firstMessage.interact.p50;
    rows.push({ figure: 'next turn, first token, p50', measured: ms(ours), target: '≤ 40 ms', met: ours <= 40 });
  }
  if (rows.length === 0) return true;
  const width = Math.max(...rows.map((row) => row.figure.length)) + 2;
  const measuredWidth = Math.max(...rows.map((row) => row.measured.length)) + 2;
  console.log('Latency targets (issue 33)\n');
  for (const row of rows) {
    console.log(
      `  ${row.figure.padEnd(width)}${row.measured.padEnd(measuredWidth)}${row.target.padEnd(20)}${row.met ? 'met' : 'missed'}`,
    );
  }
  return rows.every((row) => row.met);
};
