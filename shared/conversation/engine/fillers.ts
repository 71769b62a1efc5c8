import type { CurrentAgentActionEvent } from '../../../events/stream-events';
import type { ToolCallSpec } from '../../state-machine/schemas';
import { agentAction } from './agent-actions';
import type { EngineEvent } from './contracts';

type StartedAction = Extract<CurrentAgentActionEvent['action'], { type: 'tool-call-started' }>;

/**
 * Waits for a tool call; once it has run `audio_filler_triggered_after` seconds without
 * finishing, says so with one `action-too-long` event carrying one of the spec's
 * `audio_fillers` (chosen by the call's round, so a turn is reproducible). The filler is text
 * here; a voice response speaks it (`shared/conversation/voice.ts`).
 */
export async function* withFiller<T>(
  work: Promise<T>,
  spec: Pick<ToolCallSpec, 'audio_fillers' | 'audio_filler_triggered_after'>,
  started: StartedAction,
): AsyncGenerator<EngineEvent, T> {
  const filler = spec.audio_fillers[started.tool_round_index % Math.max(1, spec.audio_fillers.length)];
  if (filler === undefined) return await work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), spec.audio_filler_triggered_after * 1000);
  });
  // A failed call is the caller's to see when it awaits the call below, not here.
  const finished = work.then(
    () => 'finished' as const,
    () => 'finished' as const,
  );
  const first = await Promise.race([finished, late]);
  clearTimeout(timer);
  if (first === 'late') {
    yield agentAction({ type: 'action-too-long', filler, previously_started_event: started });
  }
  return await work;
}
