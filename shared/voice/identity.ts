import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { MaintenanceError } from '../kernel/errors';

/**
 * Who talks in a session, as its transport vouched for them when the socket opened, and how to
 * check them again: a live socket obeys the same identity rules as HTTP, so before each turn (and
 * each write a session makes for them) the caller is checked as they stand then.
 */
export interface SessionIdentity {
  readonly caller: Caller;
  /**
   * The caller as they stand now; throws a `DomainError` once they may no longer talk (their token
   * expired or was revoked, they were deleted or unverified, their organization is gone).
   */
  recheck(): Promise<Caller>;
}

/** The caller a session may act for now: refused during maintenance (503), as every HTTP operation but ping is. */
export const currentCaller = async (identity: SessionIdentity): Promise<Caller> => {
  if (config.maintenanceMode) throw new MaintenanceError();
  return identity.recheck();
};
