import * as z from 'zod/mini';
import { checked } from './checked.js';

/** The API versions of the client-go exec credential protocol a plugin may be asked to speak. */
export const EXEC_CREDENTIAL_API_VERSIONS = [
  'client.authentication.k8s.io/v1',
  'client.authentication.k8s.io/v1beta1',
] as const;

/** @example ExecCredentialApiVersion.parse('client.authentication.k8s.io/v1beta1') */
export const ExecCredentialApiVersion = /* @__PURE__ */ z.enum(EXEC_CREDENTIAL_API_VERSIONS, {
  error: `must be ${EXEC_CREDENTIAL_API_VERSIONS.join(' or ')}`,
});
export type ExecCredentialApiVersion = z.infer<typeof ExecCredentialApiVersion>;

/**
 * What kubectl passes a credential plugin in `KUBERNETES_EXEC_INFO`: the version to answer in,
 * and whether a person is there to answer prompts (`spec.interactive`).
 * @example ExecCredentialRequest.parse({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: { interactive: true } })
 */
export const ExecCredentialRequest = /* @__PURE__ */ z.looseObject({
  apiVersion: ExecCredentialApiVersion,
  kind: /* @__PURE__ */ z.literal('ExecCredential', { error: 'must be ExecCredential' }),
  spec: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.looseObject({
      interactive: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
      cluster: /* @__PURE__ */ z.optional(
        /* @__PURE__ */ z.looseObject({ server: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()) }),
      ),
    }),
  ),
});
export type ExecCredentialRequest = z.infer<typeof ExecCredentialRequest>;

/**
 * What a credential plugin writes to stdout: a bearer token and when it expires (RFC 3339).
 * @example ExecCredential.parse({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'eyJ…', expirationTimestamp: '2026-11-23T12:00:00Z' } })
 */
export const ExecCredential = /* @__PURE__ */ z.object({
  apiVersion: ExecCredentialApiVersion,
  kind: /* @__PURE__ */ z.literal('ExecCredential'),
  status: /* @__PURE__ */ z.object({
    token: /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
    expirationTimestamp: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.iso.datetime()),
  }),
});
export type ExecCredential = z.infer<typeof ExecCredential>;
