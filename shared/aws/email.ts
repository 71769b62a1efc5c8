import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import { config } from '../kernel/config';
import { logger } from './observability';

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}

let ses: SESv2Client | undefined;

/**
 * Sends an e-mail. With `EMAIL_OUTBOX_DIR` set (local runs and tests) each message is written
 * to that folder as one JSON file (`{to, subject, text, sent_at}`), named so files sort by
 * time; otherwise SES v2 sends it from `EMAIL_FROM`.
 */
export const sendEmail = async (message: EmailMessage): Promise<void> => {
  const outbox = process.env.EMAIL_OUTBOX_DIR;
  if (outbox) {
    await mkdir(outbox, { recursive: true });
    const name = `${Date.now()}-${randomUUID()}.json`;
    const staging = join(outbox, `.${name}.tmp`);
    await writeFile(staging, JSON.stringify({ ...message, sent_at: new Date().toISOString() }, null, 2));
    // Renamed into place so a reader never sees half a message.
    await rename(staging, join(outbox, name));
    return;
  }
  const from = process.env.EMAIL_FROM;
  if (!from) throw new Error('environment variable EMAIL_FROM is not set');
  // Imported here: only invitations and resets send mail, so the user function's cold start skips SES.
  const { SESv2Client, SendEmailCommand } = await import('@aws-sdk/client-sesv2');
  ses ??= new SESv2Client({ region: config.region });
  await ses.send(
    new SendEmailCommand({
      FromEmailAddress: from,
      Destination: { ToAddresses: [message.to] },
      Content: {
        Simple: {
          Subject: { Data: message.subject, Charset: 'UTF-8' },
          Body: { Text: { Data: message.text, Charset: 'UTF-8' } },
        },
      },
    }),
  );
  logger.info('e-mail sent', { subject: message.subject });
};
