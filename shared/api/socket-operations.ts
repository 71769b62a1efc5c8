import { twilioMediaStreamOperation } from '../phone-number/operations';
import { voiceSessionOperation } from '../voice/operations';

/**
 * Operations served over a WebSocket (by the session container, and by `npm start`'s gateway):
 * in the OpenAPI document beside the route table, not deployed as functions.
 */
export const socketOperations = [voiceSessionOperation, twilioMediaStreamOperation] as const;
