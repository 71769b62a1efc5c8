import { createVoiceSessionServer, type VoiceSessionServer } from './server';
import { createTwilioMediaStreamServer } from './twilio-media-stream';

/**
 * Every socket a voice session is opened on: the browser's (OpenAI Realtime's events) and
 * Twilio's media stream. `npm start`'s gateway and the session container hand each upgrade here.
 */
export const createSessionSockets = (options: { log?: (line: string) => void } = {}): VoiceSessionServer => {
  const servers = [createVoiceSessionServer(options), createTwilioMediaStreamServer(options)];
  return {
    handleUpgrade: (request, socket, head) => servers.some((server) => server.handleUpgrade(request, socket, head)),
    close: async () => {
      await Promise.all(servers.map((server) => server.close()));
    },
  };
};
