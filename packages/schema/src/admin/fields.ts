import * as z from 'zod/mini';
import { checked } from '../checked.js';

/** An instant as the admin API writes it: ISO 8601 with an offset. */
export const Timestamp = /* @__PURE__ */ z.iso.datetime({ offset: true });

/** The distinct values of a list, in the order first given. */
export const distinct = <T extends z.ZodMiniType>(item: T) =>
  /* @__PURE__ */ z.pipe(
    /* @__PURE__ */ z.array(item),
    /* @__PURE__ */ z.transform((values) => [...new Set(values)]),
  );

/** An email address. */
export const Email = /* @__PURE__ */ z.email({ error: 'must be an email address' });

// biome-ignore lint/suspicious/noControlCharactersInRegex: what the check refuses
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** A display name: trimmed, 1–256 characters, no control characters. */
export const DisplayName = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.trim(),
  /* @__PURE__ */ z.minLength(1, 'must not be empty'),
  /* @__PURE__ */ z.maxLength(256, 'must be at most 256 characters'),
  /* @__PURE__ */ z.refine((name) => !CONTROL_CHARACTERS.test(name), 'must not contain control characters'),
);

/** A name people recognize an object by: trimmed, not empty. */
export const Label = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.trim(),
  /* @__PURE__ */ z.minLength(1, 'must not be empty'),
);

/** A lifetime in whole seconds. */
export const Seconds = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.int({ error: 'must be a positive whole number of seconds' }),
  /* @__PURE__ */ z.positive('must be a positive whole number of seconds'),
);

/** An audience a token may be issued for: non-empty, without whitespace. */
export const Audience = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.regex(/^\S+$/, 'must be non-empty, without whitespace'),
);
