import { z } from 'zod';
import type { UserPreferences } from './schemas';

/** Any IANA zone name (or alias) the runtime's time zone database knows. */
const isTimeZone = (value: string): boolean => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
};

export const languageCode = z.string().regex(/^[a-z]{3}$/, 'must be an ISO 639-3 three-letter language code');
export const timeZone = z.string().min(1).refine(isTimeZone, 'must be an IANA time zone name');
export const audioKeyterms = z.array(z.string().regex(/^[a-z-]+( [a-z-]+){0,2}$/)).max(20);

/** Preferences as clients send them; omitted fields take the defaults. */
export const userPreferencesInput = z.object({
  enable_response_recommendation: z.boolean().default(false),
  preferred_language: languageCode.nullish().transform((value) => value ?? null),
  conversations_visible_to_admins: z.boolean().default(true),
  user_model_visible_to_admins: z.boolean().default(true),
  timezone: timeZone.nullish().transform((value) => value ?? null),
  audio_keyterms: audioKeyterms.default([]),
});

export const defaultUserPreferences = (): UserPreferences => ({
  enable_response_recommendation: false,
  preferred_language: null,
  conversations_visible_to_admins: true,
  user_model_visible_to_admins: true,
  timezone: null,
  audio_keyterms: [],
});
