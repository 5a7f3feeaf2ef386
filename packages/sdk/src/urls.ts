import { IdgateSdkError } from './errors.js';

/** `baseUrl` as a URL whose path ends with `/`, so that relative endpoint paths resolve below it. */
export function serverRoot(baseUrl: string | URL): URL {
  let root: URL;
  try {
    root = new URL(baseUrl);
  } catch (error) {
    throw new IdgateSdkError('baseUrl must be an absolute http(s) URL', { cause: error });
  }
  if (root.protocol !== 'http:' && root.protocol !== 'https:') {
    throw new IdgateSdkError('baseUrl must be an absolute http(s) URL');
  }
  // fetch refuses such a URL, quoting it whole in its message
  if (root.username !== '' || root.password !== '') {
    throw new IdgateSdkError('baseUrl must not carry credentials (user:password@): pass the apiKey option');
  }
  root.search = '';
  root.hash = '';
  if (!root.pathname.endsWith('/')) root.pathname += '/';
  return root;
}

/** The issuer identifier of the idgate server at `root`: `{baseUrl}/oauth`. */
export function issuerOfRoot(root: URL): string {
  return new URL('oauth', root).href;
}

/**
 * `issuer` checked as an issuer identifier (OIDC Discovery §3: an http(s) URL without query or
 * fragment) and without a trailing slash, ready for `/authorize` to be appended.
 */
export function checkedIssuer(issuer: string | URL): string {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch (error) {
    throw new IdgateSdkError('issuer must be an absolute http(s) URL', { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new IdgateSdkError('issuer must be an absolute http(s) URL');
  }
  if (url.search !== '' || url.hash !== '' || url.href.endsWith('?') || url.href.endsWith('#')) {
    throw new IdgateSdkError('issuer must not have a query or a fragment');
  }
  return url.href.replace(/\/+$/, '');
}
