import {
  Cluster,
  CreateClusterInput,
  CreatedCluster,
  DEVICE_CODE_GRANT_TYPE,
  DeviceAuthorizationResponse,
  IdentityProvider,
  IdentityProviderConfig,
  IdentityProviderPatch,
  Jwks,
  LinkedIdentity,
  OAuthError,
  Problem,
  ProviderMetadata,
  TokenResponse,
  TokenReviewRequest,
  TokenReviewResponse,
} from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';

const schema = (type: z.ZodType, io: 'input' | 'output' = 'output') =>
  z.toJSONSchema(type, { target: 'openapi-3.0', io, unrepresentable: 'any' });

const json = (type: z.ZodType, io: 'input' | 'output' = 'output') => ({
  'application/json': { schema: schema(type, io) },
});
const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: schema(Problem) } },
});
const oauthError = (description: string) => ({ description, content: json(OAuthError) });

const TOKEN_FORM = {
  type: 'object',
  required: ['grant_type'],
  properties: {
    grant_type: {
      type: 'string',
      enum: ['authorization_code', 'refresh_token', 'client_credentials', 'password', DEVICE_CODE_GRANT_TYPE],
    },
    scope: { type: 'string' },
    resource: { type: 'string', description: 'RFC 8707 resource indicator; may repeat' },
    username: { type: 'string', description: 'password grant' },
    password: { type: 'string', description: 'password grant' },
    code: { type: 'string', description: 'authorization_code grant' },
    redirect_uri: { type: 'string', description: 'authorization_code grant' },
    code_verifier: { type: 'string', description: 'authorization_code grant (PKCE)' },
    refresh_token: { type: 'string', description: 'refresh_token grant' },
    device_code: { type: 'string', description: 'device_code grant (RFC 8628 §3.4)' },
    client_id: { type: 'string', description: 'client_secret_post' },
    client_secret: { type: 'string', description: 'client_secret_post' },
  },
};

const DEVICE_AUTHORIZATION_FORM = {
  type: 'object',
  properties: {
    client_id: { type: 'string', description: 'public clients send only this; or client_secret_post' },
    client_secret: { type: 'string', description: 'client_secret_post' },
    scope: { type: 'string' },
    resource: { type: 'string', description: 'RFC 8707 resource indicator; may repeat' },
  },
};

const HTML_PAGE = { 'text/html': { schema: { type: 'string' } } };

/** The OpenAPI 3.0 description of the HTTP API, generated from the same zod schemas the routes use. */
export function openapiDocument(idgate: AppContext): Record<string, unknown> {
  const discovery = {
    get: {
      summary: 'OpenID Provider Metadata (OIDC Discovery 1.0)',
      tags: ['oidc'],
      security: [],
      responses: {
        200: { description: 'the metadata', content: json(ProviderMetadata) },
        304: { description: 'not modified (ETag)' },
        401: problem('an Authorization header was sent and is not valid'),
      },
    },
  };
  return {
    openapi: '3.0.3',
    info: {
      title: 'idgate',
      version: '0.1.0',
      description:
        'Identity and token service: OpenID Connect provider and Kubernetes webhook token authenticator.',
    },
    servers: [{ url: idgate.config.issuer.slice(0, -'/oauth'.length) || '/' }],
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'an idgate API key (a bare key without "Bearer " is accepted too)',
        },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client_secret_basic (RFC 6749 §2.3.1)' },
      },
    },
    paths: {
      '/oauth/.well-known/openid-configuration': discovery,
      '/.well-known/openid-configuration': discovery,
      '/.well-known/oauth-authorization-server/oauth': discovery,
      '/oauth/keys': {
        get: {
          summary: 'JSON Web Key Set',
          tags: ['oidc'],
          security: [],
          responses: {
            200: { description: 'public signing keys', content: json(Jwks) },
            304: { description: 'not modified (ETag)' },
          },
        },
      },
      '/oauth/token': {
        post: {
          summary: 'Token endpoint (RFC 6749 §3.2)',
          tags: ['oauth'],
          security: [{ clientBasic: [] }, {}],
          requestBody: {
            required: true,
            content: { 'application/x-www-form-urlencoded': { schema: TOKEN_FORM } },
          },
          responses: {
            200: { description: 'tokens', content: json(TokenResponse) },
            400: oauthError('RFC 6749 §5.2 error'),
            401: oauthError('invalid_client'),
            413: oauthError('body too large'),
          },
        },
      },
      '/oauth/device_authorization': {
        post: {
          summary: 'Device authorization endpoint (RFC 8628 §3.1)',
          description:
            'A device asks for a device code to poll the token endpoint with and a user code for the person to enter at verification_uri. Cache-Control: no-store.',
          tags: ['oauth'],
          security: [{ clientBasic: [] }, {}],
          requestBody: {
            required: true,
            content: { 'application/x-www-form-urlencoded': { schema: DEVICE_AUTHORIZATION_FORM } },
          },
          responses: {
            200: { description: 'the device and user codes', content: json(DeviceAuthorizationResponse) },
            400: oauthError('invalid_request, unauthorized_client, invalid_scope or invalid_target'),
            401: oauthError('invalid_client'),
            413: oauthError('body too large'),
          },
        },
      },
      '/oauth/device': {
        get: {
          summary: 'Device verification page (RFC 8628 §3.3)',
          description:
            'HTML. Without parameters: a form for the user code; ?user_code= prefills it (verification_uri_complete). With ?interaction= (after sign-in): the confirmation page naming the application, the scopes and the audiences, with Allow and Deny.',
          tags: ['pages'],
          security: [],
          parameters: [
            { name: 'user_code', in: 'query', required: false, schema: { type: 'string' } },
            { name: 'interaction', in: 'query', required: false, schema: { type: 'string' } },
          ],
          responses: {
            200: { description: 'the page', content: HTML_PAGE },
            303: { description: 'to the login page, until the person is signed in' },
            400: { description: 'the request expired or the code was used', content: HTML_PAGE },
          },
        },
        post: {
          summary: 'Device verification form: the user code, or the Allow / Deny decision',
          tags: ['pages'],
          security: [],
          requestBody: {
            required: true,
            content: {
              'application/x-www-form-urlencoded': {
                schema: {
                  type: 'object',
                  properties: {
                    user_code: { type: 'string', description: 'case, spaces and dashes ignored' },
                    interaction: { type: 'string' },
                    csrf: { type: 'string' },
                    decision: { type: 'string', enum: ['allow', 'deny'] },
                  },
                },
              },
            },
          },
          responses: {
            200: { description: 'the device was allowed or denied', content: HTML_PAGE },
            303: { description: 'to sign-in, or to the confirmation page' },
            400: { description: 'a wrong, expired or used code', content: HTML_PAGE },
            403: { description: 'the CSRF token does not match', content: HTML_PAGE },
            429: {
              description: 'too many wrong codes from this address',
              headers: { 'Retry-After': { schema: { type: 'integer' } } },
              content: HTML_PAGE,
            },
          },
        },
      },
      '/oauth/authenticate': {
        post: {
          summary: 'Kubernetes TokenReview (webhook token authenticator)',
          description:
            'Deprecated: kept for the Kubernetes webhook contract. Every response carries a Deprecation header (RFC 9745). A token that does not authenticate is answered 200 with status.authenticated false.',
          deprecated: true,
          tags: ['kubernetes'],
          security: [{ apiKey: [] }],
          requestBody: { required: true, content: json(TokenReviewRequest, 'input') },
          responses: {
            200: { description: 'the review', content: json(TokenReviewResponse) },
            400: problem('the body is not a TokenReview'),
            401: problem('missing or invalid API key'),
            403: problem('the API key lacks the tokenreview scope'),
            413: problem('body too large'),
            415: problem('not application/json'),
          },
        },
      },
      '/healthz': {
        get: {
          summary: 'liveness',
          tags: ['operations'],
          security: [],
          responses: { 200: { description: 'alive' } },
        },
      },
      '/readyz': {
        get: {
          summary: 'readiness',
          tags: ['operations'],
          security: [],
          responses: { 200: { description: 'ready' }, 503: { description: 'not ready' } },
        },
      },
      ...adminPaths(),
    },
  };
}

/** The admin API (`/admin/v1`): API keys with the `admin` scope; secrets only ever show as "[set]". */
function adminPaths(): Record<string, unknown> {
  const items = (type: z.ZodType) => json(z.object({ items: z.array(type) }));
  const provider = {
    description: 'the identity provider (secret fields shown as "[set]")',
    content: json(IdentityProvider),
  };
  const name = {
    name: 'name',
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description: 'any case',
  };
  const auth = {
    401: problem('missing or invalid API key'),
    403: problem('the API key lacks the admin scope'),
  };
  const unknown = problem('identity_provider_not_found');
  const readOnly = problem('identity_provider_read_only: declared in the configuration file');
  const operation = (summary: string, rest: Record<string, unknown>) => ({
    summary,
    tags: ['admin'],
    security: [{ apiKey: [] }],
    ...rest,
  });
  const toggle = (verb: 'disable' | 'enable') => ({
    post: operation(`${verb} an identity provider`, {
      parameters: [name],
      responses: { 200: provider, ...auth, 404: unknown, 409: readOnly },
    }),
  });
  return {
    '/admin/v1/identity-providers': {
      get: operation(
        "list identity providers: the configuration file's (source config), then the database's",
        {
          responses: { 200: { description: 'the providers', content: items(IdentityProvider) }, ...auth },
        },
      ),
      post: operation('add an identity provider (secrets are stored sealed)', {
        requestBody: { required: true, content: json(IdentityProviderConfig, 'input') },
        responses: {
          201: { ...provider, headers: { Location: { schema: { type: 'string', format: 'uri' } } } },
          400: problem('invalid_identity_provider (the detail names the first bad field), or invalid JSON'),
          ...auth,
          409: problem('identity_provider_exists: the name is taken, in any case'),
          413: problem('body too large'),
          415: problem('not application/json'),
        },
      }),
    },
    '/admin/v1/identity-providers/{name}': {
      get: operation('an identity provider', {
        parameters: [name],
        responses: { 200: provider, ...auth, 404: unknown },
      }),
      patch: operation(
        "change an identity provider's settings (JSON merge patch; a secret given is rotated)",
        {
          parameters: [name, { name: 'If-Match', in: 'header', required: false, schema: { type: 'string' } }],
          requestBody: { required: true, content: json(IdentityProviderPatch, 'input') },
          responses: {
            200: provider,
            400: problem('invalid_identity_provider (the detail names the first bad field), or invalid JSON'),
            ...auth,
            404: unknown,
            409: readOnly,
            412: problem('precondition_failed: If-Match is not the current ETag'),
            415: problem('not application/json'),
          },
        },
      ),
      delete: operation('delete an identity provider and every identity linked through it', {
        parameters: [name],
        responses: { 204: { description: 'deleted' }, ...auth, 404: unknown, 409: readOnly },
      }),
    },
    '/admin/v1/identity-providers/{name}/disable': toggle('disable'),
    '/admin/v1/identity-providers/{name}/enable': toggle('enable'),
    '/admin/v1/clusters': {
      get: operation('list Kubernetes clusters, by name', {
        responses: { 200: { description: 'the clusters', content: items(Cluster) }, ...auth },
      }),
      post: operation(
        'register a Kubernetes cluster: its audience, a tokenreview API key bound to it (shown once), and the shared kubectl client',
        {
          requestBody: { required: true, content: json(CreateClusterInput, 'input') },
          responses: {
            201: {
              description: 'the cluster and its API key, which is not shown again',
              content: json(CreatedCluster),
              headers: { Location: { schema: { type: 'string', format: 'uri' } } },
            },
            400: problem('invalid_cluster (the detail names the first bad field), or invalid JSON'),
            ...auth,
            409: problem('cluster_exists: the name or the audience is taken'),
            413: problem('body too large'),
            415: problem('not application/json'),
          },
        },
      ),
    },
    '/admin/v1/clusters/{name}': {
      get: operation('a Kubernetes cluster', {
        parameters: [name],
        responses: {
          200: { description: 'the cluster', content: json(Cluster) },
          ...auth,
          404: problem('cluster_not_found'),
        },
      }),
      delete: operation(
        "remove a Kubernetes cluster: its API keys are revoked, kubectl's client loses its audience",
        {
          parameters: [name],
          responses: { 204: { description: 'removed' }, ...auth, 404: problem('cluster_not_found') },
        },
      ),
    },
    '/admin/v1/users/{username}/identities': {
      get: operation("a user's linked external identities", {
        parameters: [{ name: 'username', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          200: { description: 'the identities', content: items(LinkedIdentity) },
          ...auth,
          404: problem('user_not_found'),
        },
      }),
    },
  };
}

/** `GET /openapi.json`. */
export async function openapiRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const body = JSON.stringify(openapiDocument(idgate));
  app.get('/openapi.json', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(body),
  );
}
