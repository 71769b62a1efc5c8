/**
 * The recognizers a session server may decode with at once, shared fairly between organizations.
 * A recognizer (a PocketSphinx process, a Transcribe stream) is held only while an utterance is
 * being decoded, and no organization holds the whole pool: one holds at most the pool less a
 * reserve (a third), so another's caller finds one free at once; and when a caller of an
 * organization holding fewer waits, the organization holding the most gives one back (its
 * utterance keeps the words decoded so far and goes on decoding when a recognizer is free again).
 */

export interface RecognizerLease {
  /** Gives the recognizer back (or withdraws the request while it waits). */
  release(): void;
}

export interface LeaseHandlers {
  /** A recognizer is this request's now. */
  granted(lease: RecognizerLease): void;
  /** The pool needs it back for another organization: decode what is pending, then release. */
  revoked(lease: RecognizerLease): void;
}

export interface RecognizerPool {
  /** Asks for a recognizer for a caller of `orgId`; `granted` may be called before this returns. */
  request(orgId: string, handlers: LeaseHandlers): RecognizerLease;
}

interface Claim {
  orgId: string;
  handlers: LeaseHandlers;
  lease: RecognizerLease;
  state: 'waiting' | 'held' | 'revoking' | 'released';
  /** Order of grant: the longest held is given back first. */
  grantedAt: number;
  /** When it was granted (`performance.now()`). */
  heldSince: number;
}

/**
 * A lease held this briefly is not taken back: two organizations sharing a small pool take turns
 * by utterance, not by frame.
 */
const minimumHoldMs = 1_000;

/** A pool of `capacity()` recognizers (read at each decision, so a setting can change it). */
export const createRecognizerPool = (
  capacity: () => number,
  options: { minimumHoldMs?: number } = {},
): RecognizerPool => {
  const holdAtLeastMs = options.minimumHoldMs ?? minimumHoldMs;
  const held = new Set<Claim>();
  const waiting: Claim[] = [];
  let grants = 0;

  const holding = (orgId: string, including: Claim['state'][] = ['held']) => {
    let count = 0;
    for (const claim of held) if (claim.orgId === orgId && including.includes(claim.state)) count += 1;
    return count;
  };

  /**
   * What one organization may hold: the pool less a reserve (a third of it, at least one), so
   * that another organization's caller finds a recognizer free at once, and the machine's
   * decoding is never all one organization's.
   */
  const perOrganization = () => {
    const size = capacity();
    return Math.max(1, size - Math.max(1, Math.floor(size / 3)));
  };
  const underItsShare = (claim: Claim) => holding(claim.orgId, ['held', 'revoking']) < perOrganization();

  /** The last grant each organization had: of two holding as many, the one served longest ago goes first. */
  const lastGrant = new Map<string, number>();

  /** The waiting request to serve next: of the organization holding the fewest (then served longest ago), the earliest. */
  const nextWaiting = (): Claim | undefined => {
    let best: Claim | undefined;
    let rank: [number, number] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
    for (const claim of waiting.filter(underItsShare)) {
      const candidate: [number, number] = [holding(claim.orgId, ['held', 'revoking']), lastGrant.get(claim.orgId) ?? 0];
      if (candidate[0] < rank[0] || (candidate[0] === rank[0] && candidate[1] < rank[1])) {
        best = claim;
        rank = candidate;
      }
    }
    return best;
  };

  const grant = (claim: Claim) => {
    waiting.splice(waiting.indexOf(claim), 1);
    claim.state = 'held';
    grants += 1;
    claim.grantedAt = grants;
    lastGrant.set(claim.orgId, grants);
    claim.heldSince = performance.now();
    held.add(claim);
    claim.handlers.granted(claim.lease);
  };

  /**
   * Grants what is free, then, while requests still wait, asks the organization holding the most,
   * when it holds more than the waiting one, to give back its longest held lease (one per waiting
   * request at most, and none held under `minimumHoldMs`).
   */
  const balance = () => {
    for (let next = nextWaiting(); next && held.size < capacity(); next = nextWaiting()) grant(next);
    let revoking = 0;
    for (const claim of held) if (claim.state === 'revoking') revoking += 1;
    const served = new Set<Claim>();
    while (revoking < waiting.length) {
      const candidates = waiting.filter((claim) => !served.has(claim) && underItsShare(claim));
      const next = candidates.sort((a, b) => holding(a.orgId) - holding(b.orgId))[0];
      if (!next) return;
      served.add(next);
      let richest: string | undefined;
      for (const claim of held) {
        if (claim.state === 'held' && (!richest || holding(claim.orgId) > holding(richest))) richest = claim.orgId;
      }
      if (!richest || richest === next.orgId || holding(richest) <= holding(next.orgId)) continue;
      const now = performance.now();
      const oldest = [...held]
        .filter((claim) => claim.orgId === richest && claim.state === 'held' && now - claim.heldSince >= holdAtLeastMs)
        .sort((a, b) => a.grantedAt - b.grantedAt)[0];
      if (!oldest) continue;
      oldest.state = 'revoking';
      revoking += 1;
      oldest.handlers.revoked(oldest.lease);
    }
  };

  return {
    request: (orgId, handlers) => {
      const claim: Claim = {
        orgId,
        handlers,
        state: 'waiting',
        grantedAt: 0,
        heldSince: 0,
        lease: {
          release: () => {
            if (claim.state === 'released') return;
            if (claim.state === 'waiting') waiting.splice(waiting.indexOf(claim), 1);
            claim.state = 'released';
            held.delete(claim);
            balance();
          },
        },
      };
      waiting.push(claim);
      balance();
      return claim.lease;
    },
  };
};
