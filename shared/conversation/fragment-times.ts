import { performance } from 'node:perf_hooks';

/**
 * For the bench: with `DIAGNOSTIC_FRAGMENT_TIMES=true` (local runs only; off unless set) each
 * `new-message` event carries `diagnostic_produced_at`, the epoch milliseconds (fractional) at
 * which the model produced its piece, so a client on the same machine can time the piece's
 * way to it. Off, events are exactly the reference's: SDKs never see the field.
 */
export const stampsFragmentTimes = (): boolean => process.env.DIAGNOSTIC_FRAGMENT_TIMES === 'true';

/**
 * The event, stamped when the setting is on and it is a message piece. Called as the engine
 * hands the piece over, which it does in the same tick the model yielded it (no await between).
 */
export const withProductionTime = <E extends { type: string }>(event: E): E =>
  event.type === 'new-message' && stampsFragmentTimes()
    ? Object.assign({}, event, { diagnostic_produced_at: performance.timeOrigin + performance.now() })
    : event;

/**
 * The same setting, for a voice piece: `diagnostic_clause_at` stamps when its text was complete,
 * before its synthesis. Call it when the text is cut; it returns what stamps the piece.
 */
export const clauseTimer = (): (<E extends object>(event: E) => E) => {
  if (!stampsFragmentTimes()) return (event) => event;
  const at = performance.timeOrigin + performance.now();
  return (event) => Object.assign({}, event, { diagnostic_clause_at: at });
};
