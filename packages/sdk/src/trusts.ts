import {
  type CreateTrustInput,
  Trust,
  TrustEvaluation,
  TrustName,
  type TrustTestInput,
  type UpdateTrustInput,
} from '@idgate/schema';
import { ADMIN_CALL, NO_CONTENT } from './admin-http.js';
import { ClusterMethods } from './clusters.js';
import { IdgateSdkError } from './errors.js';
import { itemsOf } from './federation.js';

const TRUSTS = itemsOf(Trust);

/**
 * The methods of {@link IdgateAdminClient} about trusts: the external issuers (CI systems, service
 * accounts) whose tokens the token exchange (RFC 8693) accepts, under `/admin/v1/trusts`.
 * @example
 * const admin = createIdgateAdminClient({ baseUrl: 'https://id.example.com', apiKey: adminKey });
 * await admin.createTrust({ name: 'gha', issuer: 'https://token.actions.githubusercontent.com', audience: 'idgate', username: 'ci:{repository}', clusters: ['prod'], maxTtl: 900 });
 */
export interface IdgateTrustMethods {
  /**
   * `GET /admin/v1/trusts`: every trust, by name.
   * @example const { items } = await admin.listTrusts();
   */
  listTrusts(): Promise<{ items: Trust[] }>;

  /**
   * `GET /admin/v1/trusts/{name}`; a 404 `IdgateHttpError` (`trust_not_found`) when there is none.
   * @example const { issuer } = await admin.getTrust('gha');
   */
  getTrust(name: string): Promise<Trust>;

  /**
   * `POST /admin/v1/trusts`: declares a trust. A 400 (`invalid_trust`) names the first bad field
   * (a condition that is not CEL, an unknown cluster); a 409 (`trust_exists`) says the name is
   * taken. Never retried.
   * @example await admin.createTrust({ name: 'gha', issuer, audience: 'idgate', username: 'ci:{repository}', clusters: ['prod'], maxTtl: 900 });
   */
  createTrust(input: CreateTrustInput): Promise<Trust>;

  /**
   * `PATCH /admin/v1/trusts/{name}`: changes the fields given (`null` clears `jwks`,
   * `discoveryUrl`, `condition`). Never retried.
   * @example await admin.updateTrust('gha', { clusters: ['prod', 'staging'] });
   */
  updateTrust(name: string, input: UpdateTrustInput): Promise<Trust>;

  /**
   * `DELETE /admin/v1/trusts/{name}`: the tokens exchanged under it stop being accepted. Never retried.
   * @example await admin.deleteTrust('gha');
   */
  deleteTrust(name: string): Promise<void>;

  /**
   * `POST /admin/v1/trusts/{name}/test`: evaluates a subject token against the trust, issuing
   * nothing and spending no `jti`: which rule failed, or what identity and clusters would result.
   * @example const { matched, rule, reason } = await admin.testTrust('gha', { token });
   */
  testTrust(name: string, input: TrustTestInput): Promise<TrustEvaluation>;
}

/** The trust methods of the admin client; its class extends this one. */
export class TrustMethods extends ClusterMethods implements IdgateTrustMethods {
  async listTrusts(): Promise<{ items: Trust[] }> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: 'admin/v1/trusts',
      schema: TRUSTS,
      schemaName: '{ items: Trust[] }',
    });
  }

  async getTrust(name: string): Promise<Trust> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/trusts/${trustSegment(name, 'GET /admin/v1/trusts/{name}')}`,
      schema: Trust,
      schemaName: 'Trust',
    });
  }

  async createTrust(input: CreateTrustInput): Promise<Trust> {
    return this[ADMIN_CALL]({
      method: 'POST',
      path: 'admin/v1/trusts',
      schema: Trust,
      schemaName: 'Trust',
      headers: { 'content-type': 'application/json' },
      body: json(input, 'POST /admin/v1/trusts'),
      retry: 0,
    });
  }

  async updateTrust(name: string, input: UpdateTrustInput): Promise<Trust> {
    const endpoint = 'PATCH /admin/v1/trusts/{name}';
    return this[ADMIN_CALL]({
      method: 'PATCH',
      path: `admin/v1/trusts/${trustSegment(name, endpoint)}`,
      schema: Trust,
      schemaName: 'Trust',
      headers: { 'content-type': 'application/json' },
      body: json(input, endpoint),
      retry: 0,
    });
  }

  async deleteTrust(name: string): Promise<void> {
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/trusts/${trustSegment(name, 'DELETE /admin/v1/trusts/{name}')}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }

  async testTrust(name: string, input: TrustTestInput): Promise<TrustEvaluation> {
    const endpoint = 'POST /admin/v1/trusts/{name}/test';
    return this[ADMIN_CALL]({
      method: 'POST',
      path: `admin/v1/trusts/${trustSegment(name, endpoint)}/test`,
      schema: TrustEvaluation,
      schemaName: 'TrustEvaluation',
      headers: { 'content-type': 'application/json' },
      body: json(input, endpoint),
    });
  }
}

function json(input: unknown, endpoint: string): string {
  try {
    return JSON.stringify(input);
  } catch (error) {
    throw new IdgateSdkError('input must be serializable as JSON', { endpoint, cause: error });
  }
}

/** `name` as a path segment, checked first so that nothing like `..` can change the path. */
function trustSegment(name: string, endpoint: string): string {
  if (typeof name !== 'string' || !TrustName.safeParse(name).success) {
    throw new IdgateSdkError(
      'name must be a trust name: letters, digits and -, starting and ending with a letter or digit',
      { endpoint },
    );
  }
  return name.toLowerCase();
}
