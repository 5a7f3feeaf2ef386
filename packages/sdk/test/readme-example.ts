import {
  createIdgateAdminClient,
  createIdgateClient,
  IdgateHttpError,
  parseAuthorizationResponse,
} from '../src/index.js';

// A client for one idgate server: token grants, userinfo, introspection, TokenReview...
const idgate = createIdgateClient({ baseUrl: 'http://localhost:8080' });

// The admin API has a client of its own, with an API key holding the scope each call needs
// (here `clusters:read`; `idgate init` prints a key with `admin`, which holds them all). Here: the
// Kubernetes clusters idgate knows.
const admin = createIdgateAdminClient({
  baseUrl: 'http://localhost:8080',
  apiKey: process.env.IDGATE_API_KEY ?? '',
});
const { items } = await admin.listClusters();
for (const cluster of items) console.log(cluster.name, cluster.audience);

// Sign-in, authorization code flow with PKCE. 1. Send the browser to `request.url`, keeping
// `codeVerifier` and `state` (in the session) until the callback.
const clientId = 'cl_…';
const redirectUri = 'https://app.example.com/callback';
const request = await idgate.createAuthorizationRequest({ clientId, redirectUri, scope: 'openid groups' });

// 2. At the callback: check the response, then exchange the code for tokens.
export async function callback(callbackUrl: string): Promise<void> {
  const { code } = parseAuthorizationResponse(callbackUrl, { state: request.state });
  try {
    const tokens = await idgate.exchangeCode({
      code,
      redirectUri,
      codeVerifier: request.codeVerifier,
      clientId,
      clientSecret: process.env.CLIENT_SECRET,
    });
    const user = await idgate.userinfo(tokens.access_token);
    console.log(user.sub, user.groups);
  } catch (error) {
    if (error instanceof IdgateHttpError) console.error(error.status, error.oauthError?.error);
    throw error;
  }
}
