import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { createVoiceSessionServer, type VoiceSessionServer } from './server';
import { createTwilioMediaStreamServer } from './twilio-media-stream';
import { refuseUpgrade, refuseUpgradeFor, upgradeTarget } from './upgrades';

/**
 * Every socket a voice session is opened on: the browser's (OpenAI Realtime's events) and
 * Twilio's media stream. `npm start`'s gateway and the session container hand each upgrade here,
 * and every upgrade is answered: one that no transport serves with 404, one that cannot be parsed
 * with 400, and whatever a transport throws with a clean 500; no request ends the process.
 */
export interface SessionSockets {
  /** Answers an upgrade request: a session's socket, or an HTTP refusal. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every session's socket (their conversations stay resumable). */
  close(): Promise<void>;
}

export const createSessionSockets = (options: { log?: (line: string) => void } = {}): SessionSockets => {
  const servers: VoiceSessionServer[] = [createVoiceSessionServer(options), createTwilioMediaStreamServer(options)];
  return {
    handleUpgrade: (request, socket, head) => {
      // A connection reset while it is refused or upgraded is the client's doing, not an error to end on.
      socket.on('error', (error) => options.log?.(`voice session socket: ${error.message}`));
      try {
        const url = upgradeTarget(request);
        if (!url) return refuseUpgrade(socket, 400, 'The request target cannot be parsed.');
        if (!servers.some((server) => server.handleUpgrade(request, socket, head, url))) {
          refuseUpgrade(socket, 404, 'Not Found');
        }
      } catch (error) {
        refuseUpgradeFor(socket, error, options.log);
      }
    },
    close: async () => {
      await Promise.all(servers.map((server) => server.close()));
    },
  };
};
