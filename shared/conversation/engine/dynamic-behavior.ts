import type { EngineExtensions, HistoryEntry, TriggeredDynamicBehavior } from './contracts';
import { EngineCapabilityError } from './errors';

/**
 * The dynamic behavior set version the latest message triggers (`EngineExtensions.selectDynamicBehavior`),
 * or null. Applying a set is not implemented yet, so a triggered set fails the turn clearly.
 */
export const triggeredDynamicBehavior = async (
  history: HistoryEntry[],
  extensions: EngineExtensions,
): Promise<TriggeredDynamicBehavior | null> => {
  const triggered = (await extensions.selectDynamicBehavior?.(history)) ?? null;
  if (triggered) {
    throw new EngineCapabilityError(
      `Dynamic behavior set ${triggered[0]} (version ${triggered[1]}) was triggered; dynamic behaviors are not supported yet.`,
    );
  }
  return triggered;
};
