import { z } from 'zod';
import { logger } from '../aws/observability';
import { defineEntity } from '../data/entity';
import {
  isLeaseHeld,
  type KeptLease,
  keepLease,
  leaseFields,
  releaseLease,
  storedLeaseOf,
  takeLease,
} from '../data/lease';
import { queryPage } from '../data/table';
import { RateLimitedError } from '../kernel/errors';

/**
 * The live voice sessions open, counted across every server of the deployment, per user and per
 * organization: one slot item per session and holder (the user, and the organization), up to the
 * holder's quota, each held by a lease (`data/lease.ts`) that the session's server renews while the
 * session runs. Opening a session reads the holder's slots (one Query) and takes a free one (one
 * conditional update); closing it gives the lease back. A server that dies frees its slots one
 * lease term later.
 */
export const voiceSessionSlots = defineEntity({
  name: 'voice-session-slot',
  token: 'VOICESLOT',
  schema: z.object({ slot: z.number().int(), ...leaseFields }),
  sort: (of: { holder: string; slot: number }) => `${of.holder}#${String(of.slot).padStart(4, '0')}`,
});

/** The holder of an organization's own slots (user ids are hexadecimal: no user is named so). */
export const organizationSlots = 'organization';

/** A session frees its slot this long after its server stopped renewing it (it died, or lost the table). */
const slotTiming = { durationMs: 60_000, renewEveryMs: 20_000, marginMs: 5_000 };
/** Slots no session uses expire from the table a day after their last take. */
const slotLifetimeSeconds = 24 * 60 * 60;

/**
 * Takes one of the holder's `quota` slots (a user's id, or `organizationSlots`) for a session
 * opening now, kept (renewed) until it is given back; undefined when every slot is held (the
 * holder is at their quota).
 */
export const holdVoiceSessionSlot = async (
  orgId: string,
  holder: string,
  quota: number,
): Promise<KeptLease | undefined> => {
  // A take lost means another session took that slot: the slots are read again, as long as one is
  // seen free (at most `quota` times, each loss being a session admitted). Of the free slots one is
  // taken at random, so sessions opening at once seldom race for the same one.
  for (let attempt = 0; attempt < quota; attempt += 1) {
    const page = await queryPage(voiceSessionSlots.query(orgId, {}, { prefix: `${holder}#` }), {
      limit: quota,
      consistent: true,
    });
    const held = new Set(
      page.items
        .map((item) => voiceSessionSlots.parse(item))
        .filter((slot) => isLeaseHeld(storedLeaseOf(slot)))
        .map((slot) => slot.slot),
    );
    const freeSlots = Array.from({ length: quota }, (_, slot) => slot).filter((slot) => !held.has(slot));
    const free = freeSlots[Math.floor(Math.random() * freeSlots.length)];
    if (free === undefined) return undefined;
    const taken = await takeLease(voiceSessionSlots.key(orgId, { holder, slot: free }), {
      durationMs: slotTiming.durationMs,
      setIfAbsent: { entity: voiceSessionSlots.name, slot: free },
      set: { expires_at_epoch: Math.ceil(Date.now() / 1000) + slotLifetimeSeconds },
    });
    if (taken) return keepLease(taken.grant, slotTiming, { voice_session_slot: `${holder}#${free}` });
  }
  return undefined;
};

/** Gives a session's slot back (a slot another server took meanwhile is left alone). */
export const releaseVoiceSessionSlot = async (slot: KeptLease): Promise<void> => {
  slot.stop();
  await releaseLease(slot.grant).catch((error: unknown) => {
    // Not given back: it frees itself when its lease runs out.
    logger.warn('voice session slot not released', { error: error as Error });
  });
};

/** Takes one of the holder's session slots, or refuses with 429 saying whose quota is full (`whose`). */
export const takeVoiceSessionSlot = async (
  orgId: string,
  holder: string,
  quota: number,
  whose: string,
): Promise<KeptLease> => {
  const slot = await holdVoiceSessionSlot(orgId, holder, quota);
  if (!slot) throw new RateLimitedError(`At most ${quota} voice sessions may be open at once ${whose}.`, 5);
  return slot;
};
