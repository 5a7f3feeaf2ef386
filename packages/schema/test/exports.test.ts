import { describe, expect, it } from 'vitest';
import * as schema from '../src/index.js';

describe('@idgate/schema exports', () => {
  it('exports exactly the schemas the other test files cover', () => {
    // Adding an export? Add valid and invalid samples for it in a test file, then list it here.
    expect(Object.keys(schema).sort()).toEqual([
      'AccessTokenClaims',
      'ApiKey',
      'ApiKeyScope',
      'AuthorizationCodeGrantRequest',
      'CallbackCodeQuery',
      'CallbackErrorQuery',
      'CallbackQuery',
      'CallbackTokenQuery',
      'ClientCredentialsGrantRequest',
      'GrantType',
      'GroupName',
      'InitResult',
      'IntrospectionResponse',
      'Jwks',
      'OAuthClient',
      'OAuthError',
      'OAuthErrorCode',
      'PasswordGrantRequest',
      'Problem',
      'ProviderMetadata',
      'PublicJwk',
      'RefreshTokenGrantRequest',
      'SigningAlgorithm',
      'SigningKeyInfo',
      'TOKEN_REVIEW_API_VERSIONS',
      'TokenRequest',
      'TokenResponse',
      'TokenReviewApiVersion',
      'TokenReviewRequest',
      'TokenReviewResponse',
      'TokenReviewSpec',
      'TokenReviewStatus',
      'TokenReviewUser',
      'User',
      'UserInfo',
      'Username',
    ]);
  });
});
