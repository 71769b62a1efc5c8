import { releaseLease } from '../data/lease';
import { takeIdleConversation } from './interruptions';
import { truncateAgentMessageText } from './message-repository';

/**
 * A barge-in's truncate: the user stopped the agent's audio at some point, so the stored agent
 * message becomes the words played before it, which the next turn's prompt then sees.
 */

/** A piece of a spoken message as it was sent: its text, where its audio starts in the message's audio, and its alignment. */
export interface SpokenPiece {
  text: string;
  startMs: number;
  /** `[start in ms within the piece, character]` for every character of its text. */
  alignment: [number, string][];
}

/**
 * The words of a spoken message whose audio started before `audioEndMs`: each character's start
 * comes from its piece's alignment (the speech marks), and a word cut off is left out.
 */
export const heardText = (pieces: readonly SpokenPiece[], audioEndMs: number): string => {
  let heard = '';
  for (const piece of pieces) {
    if (piece.startMs >= audioEndMs) break;
    const played = piece.alignment.filter(([start]) => piece.startMs + start < audioEndMs).length;
    if (played >= piece.alignment.length) {
      heard += piece.text;
      continue;
    }
    const partial = piece.alignment
      .slice(0, played)
      .map(([, character]) => character)
      .join('');
    // The word being spoken at the cut was not heard whole.
    const next = piece.alignment[played]?.[1] ?? ' ';
    heard += /\s/.test(next) ? partial : partial.replace(/\S+$/, '');
    break;
  }
  return heard.trim();
};

/**
 * Stores `text` as the agent message `messageId`, under the conversation's lease (409 while a turn
 * holds it); 404 when the conversation or the message is not there.
 */
export const truncateSpokenMessage = async (
  orgId: string,
  conversationId: string,
  messageId: string,
  text: string,
): Promise<void> => {
  const { grant, conversation } = await takeIdleConversation(orgId, conversationId);
  try {
    await truncateAgentMessageText(conversation, grant.token, messageId, text);
  } finally {
    await releaseLease(grant);
  }
};
