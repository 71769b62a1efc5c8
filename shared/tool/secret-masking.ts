import type { SandboxOutcome } from './tool-runtime';

/** Replaces every secret value in a text, so no stored or returned output carries one. */
export const maskSecrets = (text: string, secrets: readonly string[]): string =>
  secrets.filter((secret) => secret.length >= 4).reduce((masked, secret) => masked.split(secret).join('***'), text);

export const maskOutcome = (outcome: SandboxOutcome, secrets: readonly string[]): SandboxOutcome => {
  const mask = (text: string) => maskSecrets(text, secrets);
  const status = outcome.status.succeeded
    ? { ...outcome.status, output: mask(outcome.status.output) }
    : {
        ...outcome.status,
        exception_message: mask(outcome.status.exception_message),
        exception_stack_trace: outcome.status.exception_stack_trace.map(mask),
      };
  return { status, duration_ms: outcome.duration_ms, stdout: mask(outcome.stdout), stderr: mask(outcome.stderr) };
};
