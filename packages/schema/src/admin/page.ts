import * as z from 'zod/mini';
import { checked } from '../checked.js';

/**
 * One page of a listing of the admin API: `items` in the listing's order and, when there are
 * more, the opaque `nextCursor` to pass as `?cursor=` for the next page (null on the last page).
 * @example pageOf(User).parse({ items: [], nextCursor: null })
 */
export const pageOf = <T extends z.ZodMiniType>(item: T) =>
  /* @__PURE__ */ z.object({
    items: /* @__PURE__ */ z.array(item),
    nextCursor: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  });

/**
 * The paging parameters of a listing (`?limit=&cursor=`), as the query string sends them:
 * `limit` 1–500 (default 100), `cursor` the `nextCursor` of the page before.
 * @example PageQuery.parse({ limit: '50' }) // { limit: 50 }
 */
export const PageQuery = /* @__PURE__ */ z.object({
  limit: /* @__PURE__ */ z._default(
    /* @__PURE__ */ z.pipe(
      /* @__PURE__ */ z.pipe(
        /* @__PURE__ */ checked(
          /* @__PURE__ */ z.string(),
          /* @__PURE__ */ z.regex(/^[0-9]{1,4}$/, 'must be a whole number from 1 to 500'),
        ),
        /* @__PURE__ */ z.transform(Number),
      ),
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.int(),
        /* @__PURE__ */ z.gte(1, 'must be a whole number from 1 to 500'),
        /* @__PURE__ */ z.lte(500, 'must be a whole number from 1 to 500'),
      ),
    ),
    100,
  ),
  cursor: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(512),
    ),
  ),
});
export type PageQuery = z.infer<typeof PageQuery>;
