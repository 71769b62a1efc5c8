import type { ConversationFigures, Percentiles } from './conversations';
import type { PeerFigures } from './peer';
import type { VoiceFigures } from './voice';

/**
 * Issue 33's table, from whichever of the sections `voice`, `conversations` and `peer` ran:
 * each figure beside its target. The first tokens of an opening and of the next turn come from
 * `peer` (ours beside LangGraph's, interleaved: the ratio decides), else the next turn's from
 * `conversations`, shown without a verdict.
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
  // First tokens are judged against LangGraph's, measured side by side: on a shared machine an
  // absolute line reads the machine's load as much as the platform.
  const peer = figures.peer?.available ? figures.peer : undefined;
  if (peer) {
    const againstPeer = (figure: string, ours: number, theirs: number) => {
      const ratio = ours / theirs;
      rows.push({
        figure,
        measured: `${ms(ours)} (${ratio.toFixed(2)}× LangGraph's)`,
        target: '≤ 0.7×',
        met: ratio <= 0.7,
      });
    };
    againstPeer('create, first token, p50', peer.ours.opening.firstToken.p50, peer.peer.opening.firstToken.p50);
    againstPeer('next turn, first token, p50', peer.ours.next.firstToken.p50, peer.peer.next.firstToken.p50);
  } else if (figures.conversations) {
    const ours = figures.conversations.firstMessage.interact.p50;
    rows.push({
      figure: 'next turn, first token, p50',
      measured: ms(ours),
      target: '≤ 0.7× (run peer)',
      met: undefined,
    });
  }
  if (rows.length === 0) return true;
  const width = Math.max(...rows.map((row) => row.figure.length)) + 2;
  const measuredWidth = Math.max(...rows.map((row) => row.measured.length)) + 2;
  console.log('Latency targets (issue 33)\n');
  for (const row of rows) {
    console.log(
      `  ${row.figure.padEnd(width)}${row.measured.padEnd(measuredWidth)}${row.target.padEnd(20)}${row.met === undefined ? '' : row.met ? 'met' : 'missed'}`,
    );
  }
  return rows.every((row) => row.met !== false);
};
