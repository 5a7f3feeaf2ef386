import type { FormField, FormReader } from '@idgate/schema';
import { z } from 'zod';

/**
 * An interaction id, as the pages' forms and queries carry it: idgate makes them of 18 random
 * bytes in base64url, and `BrowserState.loadInteraction` looks up no other shape (whatever
 * else arrives is a request that has expired).
 */
export const InteractionId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'not an interaction id');

/**
 * The Allow or Deny button of the consent and device confirmation forms: anything but `allow`,
 * or no decision at all, denies.
 */
export const Decision = z
  .enum(['allow', 'deny'])
  .catch('deny')
  .default('deny')
  .describe('anything but allow denies');

/**
 * A page form's field, or undefined when it is missing or the form's schema refuses it: a field
 * the page cannot read is as good as absent, and the page answers as it does for a missing one.
 */
export const present = <T>(field: FormField<T>): T | undefined => (field.ok ? field.value : undefined);

/** A sign-in page form's interaction id and CSRF token, each undefined when absent or malformed. */
export function interactionFields<Shape extends { interaction: z.ZodType<string>; csrf: z.ZodType<string> }>(
  form: FormReader<Shape>,
): { interaction: string | undefined; csrf: string | undefined } {
  return {
    interaction: present(form.field('interaction')) as string | undefined,
    csrf: present(form.field('csrf')) as string | undefined,
  };
}
