import { z } from 'zod';
import { defineVersionedEntity } from '../data/versioned-entity';
import { stateMachineVersionRecord } from './schemas';

/** A stored state machine version: the listed record plus its internal id. */
const storedStateMachineVersion = stateMachineVersionRecord.extend({ id: z.string() });
export type StoredStateMachineVersion = z.infer<typeof storedStateMachineVersion>;

/**
 * Service hierarchical state machines: heads `STATE_MACHINE`, name guards `STATE_MACHINE_NAME`,
 * versions `STATE_MACHINE_VERSION`.
 */
export const stateMachines = defineVersionedEntity({
  entity: 'state-machine',
  token: 'STATE_MACHINE',
  label: 'service hierarchical state machine',
  version: storedStateMachineVersion,
});

/**
 * What other capabilities read of state machines: heads by id, a version (undefined when the
 * machine or that version does not exist; versions are immutable, so a conversation may keep what
 * it read for its whole life), and the count of active services using one (services keep it).
 */
export const {
  get: getStateMachine,
  getMany: getStateMachines,
  getVersion: getStateMachineVersion,
  activeServiceDelta: stateMachineActiveServiceDelta,
} = stateMachines;
