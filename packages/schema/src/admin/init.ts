import * as z from 'zod/mini';

/**
 * What `idgate init --json` prints: the credentials it created, each shown only this once.
 * @example InitResult.parse({ issuer: 'http://localhost:8080/oauth', apiKey: 'idg_x_y', admin: { username: 'admin', password: 'p' }, client: { clientId: 'c', clientSecret: 's' } })
 */
export const InitResult = /* @__PURE__ */ z.strictObject({
  issuer: /* @__PURE__ */ z.string(),
  apiKey: /* @__PURE__ */ z.string(),
  admin: /* @__PURE__ */ z.strictObject({
    username: /* @__PURE__ */ z.string(),
    password: /* @__PURE__ */ z.string(),
  }),
  client: /* @__PURE__ */ z.strictObject({
    clientId: /* @__PURE__ */ z.string(),
    clientSecret: /* @__PURE__ */ z.string(),
  }),
  /** With `init --demo`: what the example application signs in with, and who signs in. */
  demo: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.strictObject({
      appUrl: /* @__PURE__ */ z.string(),
      user: /* @__PURE__ */ z.strictObject({
        username: /* @__PURE__ */ z.string(),
        password: /* @__PURE__ */ z.string(),
      }),
      client: /* @__PURE__ */ z.strictObject({
        clientId: /* @__PURE__ */ z.string(),
        clientSecret: /* @__PURE__ */ z.string(),
        redirectUri: /* @__PURE__ */ z.string(),
      }),
      cluster: /* @__PURE__ */ z.strictObject({
        name: /* @__PURE__ */ z.string(),
        audience: /* @__PURE__ */ z.string(),
        apiKey: /* @__PURE__ */ z.string(),
      }),
    }),
  ),
});
export type InitResult = z.infer<typeof InitResult>;
