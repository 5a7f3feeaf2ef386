import { type LoginAttemptRepository, TOKEN_REVIEW_DENIAL_MESSAGES } from '@idgate/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Database } from '../storage/database.js';
import { SeriesCounter, SeriesHistogram } from './metric-series.js';

/**
 * The Prometheus metrics of one server. Each server has its own registry (not prom-client's global
 * one), so several servers in one process (tests) keep separate counts. Label values are bounded:
 * route patterns, never raw URLs, and short fixed slugs, never tokens, ids or query strings.
 */
export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: SeriesCounter<'method' | 'route' | 'status'>;
  readonly httpRequestDuration: SeriesHistogram<'method' | 'route'>;
  readonly tokenReviews: SeriesCounter<'outcome'>;
  readonly tokenReviewDenials: SeriesCounter<'reason'>;
  readonly tokensIssued: Counter<'grant_type'>;
  readonly logins: Counter<'provider' | 'outcome'>;
  readonly databasePool: Gauge<'state'>;
  /** Live tails of the audit trail open now (`GET /admin/v1/events/stream`). */
  readonly auditStreams: Gauge;
  /** Live tails ended, by why: client, lifetime, idle, backpressure, error, shutdown. */
  readonly auditStreamsClosed: Counter<'reason'>;
  /** Reads of the audit table by the live tails (all of a process's streams share one poll). */
  readonly auditStreamReads: Counter;
  /** The TokenReview counters' series handles (reasons are bounded slugs, made on first use). */
  readonly reviews: ReviewSeries;
  /** The provider label values `idgate_logins_total` has taken, at most {@link MAX_LOGIN_PROVIDERS}. */
  readonly loginProviders: Set<string>;
}

/**
 * A fresh set of idgate metrics in its own registry, with the default process metrics; with a
 * `database`, `idgate_db_pool{state}` reports its connections, read at scrape time. PostgreSQL: the
 * pg pool's total, idle and waiting counts. SQLite: one connection (total=1; the driver is
 * synchronous, so it is idle whenever a scrape runs).
 */
export function createMetrics(database?: Database): Metrics {
  const pool = database?.pool;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const databasePool = new Gauge({
    name: 'idgate_db_pool',
    help: 'Database connections by state: total (open), idle, waiting (queued requests for a connection).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      // Read at scrape time only: nothing polls the pool in between.
      if (database === undefined) return;
      this.set({ state: 'total' }, pool?.totalCount ?? 1);
      this.set({ state: 'idle' }, pool?.idleCount ?? 1);
      this.set({ state: 'waiting' }, pool?.waitingCount ?? 0);
    },
  });
  const tokenReviews = new SeriesCounter({
    name: 'idgate_token_reviews_total',
    help: 'Kubernetes TokenReviews decided, by outcome (authenticated or denied).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  return {
    registry,
    httpRequests: new SeriesCounter({
      name: 'idgate_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpRequestDuration: new SeriesHistogram({
      name: 'idgate_http_request_duration_seconds',
      help: 'Time to answer HTTP requests, by method and route pattern.',
      labelNames: ['method', 'route'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    tokenReviews,
    tokenReviewDenials: new SeriesCounter({
      name: 'idgate_token_review_denials_total',
      help: 'TokenReviews denied, by reason.',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    tokensIssued: new Counter({
      name: 'idgate_tokens_issued_total',
      help: 'Successful token responses, by grant type ("federation" for tokens answered by an identity provider callback).',
      labelNames: ['grant_type'] as const,
      registers: [registry],
    }),
    logins: new Counter({
      name: 'idgate_logins_total',
      help: 'Sign-in attempts, by provider ("password" or the identity provider name) and outcome (success, failure, locked).',
      labelNames: ['provider', 'outcome'] as const,
      registers: [registry],
    }),
    databasePool,
    auditStreams: new Gauge({
      name: 'idgate_audit_streams',
      help: 'Live tails of the audit trail (GET /admin/v1/events/stream) open on this process.',
      registers: [registry],
    }),
    auditStreamsClosed: new Counter({
      name: 'idgate_audit_streams_closed_total',
      help: 'Live tails of the audit trail ended, by reason: client (it went away), lifetime (audit.stream.maxLifetime), idle (audit.stream.idleTimeout), backpressure (audit.stream.maxBuffered), error (the database), shutdown.',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    auditStreamReads: new Counter({
      name: 'idgate_audit_stream_reads_total',
      help: 'Reads of the audit table by the live tails: one poll per process for all its streams, and one catch-up read per stream as it starts.',
      registers: [registry],
    }),
    reviews: {
      authenticated: tokenReviews.series({ outcome: 'authenticated' }),
      denied: tokenReviews.series({ outcome: 'denied' }),
      denials: new Map(),
    },
    loginProviders: new Set(),
  };
}

// `status.error` of a denied review → the denial's code, a short and bounded label.
const DENIAL_REASONS = new Map<string, string>(
  Object.entries(TOKEN_REVIEW_DENIAL_MESSAGES).map(([reason, message]) => [message, reason] as const),
);

/** The `reason` label of a denial: a short slug, `other` for an error this list does not know. */
export function denialReason(error: string | undefined): string {
  return (error === undefined ? undefined : DENIAL_REASONS.get(error)) ?? 'other';
}

/**
 * Counts one decided TokenReview (call it with the answer's `status`).
 * @example recordTokenReview(context.metrics, answer.status);
 */
export function recordTokenReview(
  metrics: Metrics,
  status: { authenticated?: boolean | undefined; error?: string | undefined },
): void {
  const series = metrics.reviews;
  if (status.authenticated === true) {
    series.authenticated();
    return;
  }
  series.denied();
  const reason = denialReason(status.error);
  let denial = series.denials.get(reason);
  if (denial === undefined) {
    denial = metrics.tokenReviewDenials.series({ reason });
    series.denials.set(reason, denial);
  }
  denial();
}

/** The TokenReview counters' series handles of one metrics set (reasons are bounded slugs). */
export interface ReviewSeries {
  readonly authenticated: () => void;
  readonly denied: () => void;
  readonly denials: Map<string, () => void>;
}

// Identity provider names are admin-controlled; still, the label never grows past this many values.
const MAX_LOGIN_PROVIDERS = 64;
function providerLabel(metrics: Metrics, provider: string): string {
  const seen = metrics.loginProviders;
  if (seen.has(provider)) return provider;
  if (seen.size >= MAX_LOGIN_PROVIDERS || !/^[A-Za-z0-9._-]{1,64}$/.test(provider)) return 'other';
  seen.add(provider);
  return provider;
}

/**
 * `repo` with every recorded attempt counted in `idgate_logins_total{provider,outcome}`: outcome
 * `success`, `locked` (refused by brute-force protection) or `failure`. Every other method is
 * `repo`'s own.
 * @example new LoginThrottle(instrumentLoginAttempts(storage.loginAttempts, metrics), …)
 */
export function instrumentLoginAttempts(
  repo: LoginAttemptRepository,
  metrics: Metrics,
): LoginAttemptRepository {
  const record: LoginAttemptRepository['record'] = (attempt) => {
    const outcome = attempt.success ? 'success' : attempt.reason === 'locked' ? 'locked' : 'failure';
    metrics.logins.inc({ provider: providerLabel(metrics, attempt.provider), outcome });
    return repo.record(attempt);
  };
  // A proxy rather than a copy: methods on a class prototype, and any the interface gains, keep working.
  return new Proxy(repo, {
    get(target, property) {
      if (property === 'record') return record;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

// A grant type as a label: only successful responses are counted, so it is one the server
// supports; the pattern keeps anything odd out all the same.
function grantTypeLabel(body: unknown): string {
  const grantType =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>).grant_type : undefined;
  if (typeof grantType !== 'string') return 'unknown';
  return /^[A-Za-z0-9:._-]{1,128}$/.test(grantType) ? grantType : 'other';
}

function isJson(reply: FastifyReply): boolean {
  const type = reply.getHeader('content-type');
  return typeof type === 'string' && type.toLowerCase().startsWith('application/json');
}

/** The HTTP metrics' series of one (method, route, status), made once and reused. */
interface ResponseSeries {
  readonly count: () => void;
  readonly duration: (seconds: number) => void;
}

/**
 * What the `onResponse` hook of the metrics plugin calls for every answered request: counts it in
 * `idgate_http_requests_total` and `idgate_http_request_duration_seconds` (and, for tokens
 * answered, `idgate_tokens_issued_total`). The series handles of each (method, route, status) are
 * made on first use and kept, so a request builds no label set: the count is a plain increment
 * and the duration adds to a bucket array (see metric-series.ts). The labels are bounded
 * (methods, route patterns, status codes), and so is what is kept.
 * @example app.addHook('onResponse', (request, reply, done) => { observe(request, reply); done(); });
 */
export function responseObserver(metrics: Metrics): (request: FastifyRequest, reply: FastifyReply) => void {
  // Route pattern → method → status: the route and method strings are the same objects on every
  // request (their hashes are cached) and the status is a number, so finding a series builds no key.
  const series = new Map<string, Map<string, Map<number, ResponseSeries>>>();
  const seriesOf = (method: string, route: string, status: number): ResponseSeries => {
    let byMethod = series.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      series.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let found = byStatus.get(status);
    if (found === undefined) {
      found = {
        count: metrics.httpRequests.series({ method, route, status: String(status) }),
        duration: metrics.httpRequestDuration.series({ method, route }),
      };
      byStatus.set(status, found);
    }
    return found;
  };
  return (request, reply) => {
    const pattern: string | undefined = request.routeOptions.url;
    const route = request.is404 || pattern === undefined ? 'unmatched' : pattern;
    const method = METHODS.has(request.method) ? request.method : 'other';
    const status = reply.statusCode;
    const { count, duration } = seriesOf(method, route, status);
    count();
    duration(reply.elapsedTime / 1000);
    if (status !== 200) return;
    if (route === '/oauth/token' && method === 'POST') {
      metrics.tokensIssued.inc({ grant_type: grantTypeLabel(request.body) });
    } else if (route === '/oauth/callback/:callback' && isJson(reply)) {
      // The callback answers tokens as JSON; a 200 in HTML is a page of the browser flow (consent).
      metrics.tokensIssued.inc({ grant_type: 'federation' });
    }
  };
}
