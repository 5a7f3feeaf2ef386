import {
  ACR,
  acrOf,
  clustersNeedingMfa,
  type DeviceApprovalRequest,
  formatUserCode,
  isDeviceApproval,
  wantsMfa,
} from '@idgate/core';
import { FormReader, type FormValues } from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requestOrigin } from '../../http/caller.js';
import type { FormBody } from '../../http/form.js';
import { AuthorizationFlow } from '../../pages/flow.js';
import { PAGE_ANSWERS, pageRoute, sendPage } from '../../pages/form-action.js';
import { Decision, InteractionId, present } from '../../pages/form-fields.js';
import type { Messages } from '../../pages/i18n.js';
import { resourceTargets } from '../../pages/resource-targets.js';
import { BrowserState } from '../../pages/state.js';
import { deviceCodePage, deviceConfirmPage } from '../../pages/views/device.js';
import { messagePage } from '../../pages/views/message.js';

// The page's query and its two forms in one (the code form, and the confirmation form that carries
// an interaction), and what the handlers read them with. A field that cannot be read is as good as
// absent: the page answers as it does for one that is missing (see `present`).
const USER_CODE = 'the code the device shows (case, spaces and dashes ignored)';
/** As much of a typed user code as is read and shown back: 32 characters (a code is 9). */
const first32 = (code: string) => code.slice(0, 32);
const DeviceQuery = z.object({
  user_code: z
    .string()
    .overwrite(first32)
    .optional()
    .describe(
      `${USER_CODE}, to prefill the form with (verification_uri_complete); at most 32 characters are read`,
    ),
  interaction: InteractionId.optional().describe('the device request being confirmed, after sign-in'),
});
const DeviceForm = z.object({
  user_code: z
    .string()
    .trim()
    .overwrite(first32)
    .min(1)
    .optional()
    .describe(
      `${USER_CODE}: the code form's one field, read when no interaction is sent; leading and trailing spaces are ignored, at most 32 characters are read`,
    ),
  interaction: InteractionId.optional().describe(
    'the device request being confirmed, after sign-in: sent once, it makes the form the confirmation form (csrf and decision)',
  ),
  csrf: z.string().optional().describe("the confirmation form's CSRF token"),
  decision: Decision,
});

const WRONG_CODE = (t: Messages) => t.errors.wrongCode;
const DECIDED = (t: Messages) => t.errors.codeUsed;
const EXPIRED = (t: Messages) => t.errors.deviceExpired;

/**
 * The verification page of the device authorization grant (RFC 8628 §3.3), `GET/POST
 * /oauth/device`: the person types the user code (or arrives with `?user_code=` from
 * `verification_uri_complete`), signs in exactly as on the login page (an interaction whose
 * stored request is the device approval; an existing browser session is reused), then allows or
 * denies the device on a confirmation page that names the application, the code, the scopes and
 * the audiences (§5.4).
 */
export async function deviceRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const state = new BrowserState(idgate);
  const flow = new AuthorizationFlow(idgate, state);
  const { loginPath, devicePath } = flow;
  const { device } = idgate.core;
  const showCodeForm = (
    reply: FastifyReply,
    status: number,
    userCode?: string,
    error?: (t: Messages) => string,
  ) => {
    const look = flow.look(reply.request);
    const shown = error?.(look.t);
    return sendPage(reply, status, deviceCodePage({ look, action: devicePath, userCode, error: shown }));
  };
  const showMessage = (
    reply: FastifyReply,
    title: (t: Messages) => string,
    message: (t: Messages) => string,
  ) => {
    const look = flow.look(reply.request);
    return sendPage(reply, 200, messagePage({ look, title: title(look.t), message: message(look.t) }));
  };
  const deviceInteraction = async (request: FastifyRequest, id: string | undefined) => {
    const interaction = await state.loadInteraction(request, id);
    if (interaction === undefined) return undefined;
    const stored = interaction.request;
    return isDeviceApproval(stored) ? { interaction, stored } : undefined;
  };

  app.get<{ Querystring: FormValues }>(
    '/oauth/device',
    pageRoute({
      operationId: 'getDevicePage',
      summary: 'Device verification page (RFC 8628 §3.3)',
      description:
        'Without parameters: a form for the user code; ?user_code= prefills it (verification_uri_complete). With ?interaction= (after sign-in): the confirmation page naming the application, the scopes and the audiences, with Allow and Deny.',
      query: DeviceQuery,
      responses: {
        200: PAGE_ANSWERS.page('the code form, or the confirmation page'),
        303: PAGE_ANSWERS.redirect('to the login page, until the person is signed in'),
        400: PAGE_ANSWERS.error('the request expired, or the code was used'),
      },
    }),
    async (request, reply) => {
      const query = new FormReader(DeviceQuery, request.query);
      const sent = query.field('interaction');
      // Without an interaction, the code form; one that cannot be read has expired.
      if (sent.ok && sent.value === undefined) {
        return showCodeForm(reply, 200, present(query.field('user_code')));
      }
      const found = await deviceInteraction(request, present(sent));
      if (found === undefined) return flow.errorPage(reply, 400, EXPIRED);
      const { interaction, stored } = found;
      if (interaction.userId === null) {
        return reply.redirect(`${loginPath}?interaction=${encodeURIComponent(interaction.id)}`, 303);
      }
      const pending = await device.find(stored.device.deviceCodeHash);
      const user = await idgate.storage.users.findById(interaction.userId);
      if (!pending.ok || user === undefined) {
        await state.finishInteraction(reply, interaction.id);
        return flow.errorPage(reply, 400, pending.ok || pending.failure !== 'decided' ? WRONG_CODE : DECIDED);
      }
      // Every audience the device's grant will cover (requests from before idgate fixed them when
      // the device asked: the client's audiences, which such a grant covers).
      const audiences = pending.request.resource ?? pending.client.audiences;
      return sendPage(
        reply,
        200,
        deviceConfirmPage({
          look: flow.look(request),
          action: devicePath,
          interactionId: interaction.id,
          csrfToken: interaction.csrfToken,
          clientName: pending.client.name,
          username: user.username,
          userCode: formatUserCode(pending.request.userCode),
          scopes: pending.request.scope,
          targets: await resourceTargets(idgate, audiences),
        }),
      );
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/device',
    pageRoute({
      operationId: 'verifyDevice',
      summary: 'Device verification form: the user code, or the Allow / Deny decision',
      body: { form: DeviceForm },
      responses: {
        200: PAGE_ANSWERS.page('the device was allowed or denied, or the confirmation page'),
        303: PAGE_ANSWERS.redirect('to sign in, or to the confirmation page'),
        400: PAGE_ANSWERS.error('a wrong, expired or used code'),
        403: PAGE_ANSWERS.error('the CSRF token does not match'),
        429: {
          ...PAGE_ANSWERS.error(
            'too many wrong codes from this address, or from all addresses together (bruteForce.maxWrongUserCodes)',
          ),
          headers: { 'Retry-After': 'seconds until a code may be entered again' },
        },
      },
    }),
    async (request, reply) => {
      const form = new FormReader(DeviceForm, request.body ?? {});
      // The confirmation form sends its interaction once; a form without one (or with several)
      // is the code form.
      if (typeof form.sent('interaction') === 'string') return decide(request, reply, form);
      const typed = present(form.field('user_code'));
      if (typed === undefined) return showCodeForm(reply, 400, '', (t) => t.enterCode);
      const found = await device.enterUserCode(typed, request.ip, request.headers['user-agent'] ?? null);
      if (!found.ok) {
        switch (found.failure) {
          case 'locked': {
            reply.header('retry-after', String(found.retryAfterSeconds));
            const minutes = Math.ceil(found.retryAfterSeconds / 60);
            return showCodeForm(reply, 429, typed, (t) =>
              found.scope === 'all'
                ? t.errors.tooManyCodesEverywhere(minutes)
                : t.errors.tooManyCodes(minutes),
            );
          }
          case 'decided':
            return showCodeForm(reply, 400, typed, DECIDED);
          default:
            return showCodeForm(reply, 400, typed, WRONG_CODE);
        }
      }
      // A device asking for a cluster that requires a second factor is approved by a sign-in
      // with one: a session without it signs in again.
      const covered = found.request.resource ?? found.client.audiences;
      const mfaClusters = (await idgate.storage.clusters.list()).filter((cluster) => cluster.requireMfa);
      const needsMfa =
        found.client.requireMfa === true || clustersNeedingMfa(mfaClusters, covered).length > 0;
      const stored: DeviceApprovalRequest = {
        device: { deviceCodeHash: found.request.deviceCodeHash },
        clientId: found.client.clientId,
        ...(needsMfa ? { acrValues: [ACR.mfa] } : {}),
      };
      const interaction = await state.createInteraction(reply, stored);
      const current = await state.currentSession(request);
      if (current === undefined || (needsMfa && acrOf(current.session.amr) !== ACR.mfa)) {
        return reply.redirect(`${loginPath}?interaction=${encodeURIComponent(interaction.id)}`, 303);
      }
      await idgate.storage.interactions.setUser(
        interaction.id,
        current.user.id,
        current.session.authTime,
        current.session.amr ?? null,
      );
      return flow.confirmDevice(reply, interaction.id);
    },
  );

  async function decide(
    request: FastifyRequest<{ Body: FormBody | undefined }>,
    reply: FastifyReply,
    form: FormReader<typeof DeviceForm.shape>,
  ): Promise<FastifyReply> {
    const found = await deviceInteraction(request, present(form.field('interaction')));
    if (found === undefined || found.interaction.userId === null || found.interaction.authTime === null) {
      return flow.errorPage(reply, 400, EXPIRED);
    }
    const { interaction, stored } = found;
    if (!(await state.checkCsrf(interaction, present(form.field('csrf'))))) {
      return flow.errorPage(reply, 403, (t) => t.errors.notFromThisPage);
    }
    const user = await idgate.storage.users.findById(interaction.userId as string);
    if (user === undefined || user.disabled) return flow.errorPage(reply, 400, EXPIRED);
    // The sign-in of this interaction had the second factor a cluster of the device requires.
    if (wantsMfa(stored.acrValues) && acrOf(interaction.amr) !== ACR.mfa)
      return flow.errorPage(reply, 400, EXPIRED);
    const current = await state.currentSession(request);
    const own = current?.user.id === user.id ? current : undefined;
    const approver = {
      user,
      authTime: interaction.authTime as Date,
      sessionId: own?.session.id ?? null,
      // The sign-in's upstream identity, as its session recorded it, goes on to the device's grant.
      upstream: own?.session.upstream ?? null,
      // How the approver signed in during this interaction (a second factor included).
      amr: interaction.amr ?? null,
      origin: requestOrigin(request),
    };
    const allow = present(form.field('decision')) === 'allow';
    const hash = stored.device.deviceCodeHash;
    const outcome = allow ? await device.approve(hash, approver) : await device.deny(hash, approver);
    await state.finishInteraction(reply, interaction.id);
    if (!outcome.ok) return flow.errorPage(reply, 400, outcome.failure === 'decided' ? DECIDED : WRONG_CODE);
    return allow
      ? showMessage(
          reply,
          (t) => t.deviceConnected,
          (t) => t.deviceConnectedMessage,
        )
      : showMessage(
          reply,
          (t) => t.deviceDenied,
          (t) => t.deviceDeniedMessage,
        );
  }
}
