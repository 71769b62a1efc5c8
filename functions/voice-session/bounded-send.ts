import type { WebSocket } from 'ws';

/**
 * Sends frames on a socket whose client may not read them: what the server holds unsent
 * (`bufferedAmount`, beyond what the kernel's buffers took) is bounded, and past the bound the
 * client is taken as not reading (`onOverflow`, once) rather than buffered without end.
 */
export const boundedSend = (
  ws: WebSocket,
  maxBufferedBytes: number,
  onOverflow: () => void,
): ((frames: readonly string[]) => void) => {
  let overflowed = false;
  return (frames) => {
    if (overflowed) return;
    for (const frame of frames) if (ws.readyState === ws.OPEN) ws.send(frame);
    if (ws.bufferedAmount > maxBufferedBytes) {
      overflowed = true;
      onOverflow();
    }
  };
};
