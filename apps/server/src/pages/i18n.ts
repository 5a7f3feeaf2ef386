import { type Html, html } from './views/html.js';

/** The languages the pages speak, in the order a tie goes. */
export const LOCALES = ['en', 'de'] as const;
export type Locale = (typeof LOCALES)[number];

/** Everything the pages say, in one language. Values with `<strong>` are {@link Html} (escaped inside). */
export interface Messages {
  lang: Locale;
  signIn: string;
  continueTo(client: string): Html;
  account: string;
  localAccount(product: string): string;
  username: string;
  password: string;
  otherWays: string;
  signInWith(provider: string): string;
  scopes: Readonly<Record<string, string>>;
  otherScope(scope: string): string;
  tokensFor: string;
  cluster: string;
  audience: string;
  allowAccess: string;
  allowClient(client: string): Html;
  consentAsks(user: string, client: string): Html;
  allow: string;
  deny: string;
  remembered: string;
  connectDevice: string;
  enterCode: string;
  code: string;
  continue: string;
  allowDevice: string;
  allowOnDevice(client: string): Html;
  deviceAsks(user: string, code: string, client: string): Html;
  onlyIfYou: string;
  ableTo: string;
  deviceConnected: string;
  deviceConnectedMessage: string;
  deviceDenied: string;
  deviceDeniedMessage: string;
  wayBack: string;
  requestId: string;
  signOut: string;
  signOutQuestion: string;
  signedInAs(user: string): Html;
  signedInMessage(user: string): string;
  signedOut: string;
  signedOutMessage: string;
  signedIn: string;
  signInFailed: string;
  /** The second-factor pages: the step after the password, and the account page. */
  factors: {
    title: string;
    enterCode: string;
    code: string;
    verify: string;
    setUpTitle: string;
    setUpRequired: string;
    scan: string;
    qrLabel: string;
    key: string;
    name: string;
    defaultName: string;
    add: string;
    recoveryTitle: string;
    recoveryIntro: string;
    continue: string;
    regenerate: string;
    remove: string;
    none: string;
    enrolled: string;
    removed: string;
    listTitle: string;
    recoveryLeft(count: number): string;
    lastUsed(at: string): string;
    wrongCode: string;
    nameTaken: string;
    nameInvalid: string;
    signInFirst: string;
  };
  /** Passkeys (WebAuthn): signing in with one, as a second factor, adding one on the account page. */
  passkeys: {
    signIn: string;
    useAsSecondFactor: string;
    add: string;
    defaultName: string;
    added: string;
    cancelled: string;
    kind: string;
    created(at: string): string;
    refused: Record<
      | 'challenge'
      | 'unknown_credential'
      | 'origin'
      | 'user_verification'
      | 'counter'
      | 'name_taken'
      | 'invalid',
      string
    >;
  };
  /** Error page headings by HTTP status; others keep their English name. */
  statusTitles: Readonly<Record<number, string>>;
  errors: {
    invalidCredentials: string;
    disabled: string;
    notLinked(product: string): string;
    enterCredentials: string;
    chooseAccount: string;
    directoryDown: string;
    notFromThisPage: string;
    notFromSignInPage: string;
    notFromConsentPage: string;
    locked(minutes: number): string;
    tooManyCodes(minutes: number): string;
    tooManyCodesEverywhere(minutes: number): string;
    signInExpired: string;
    wrongCode: string;
    codeUsed: string;
    deviceExpired: string;
    logoutNotForm: string;
  };
}

const en: Messages = {
  lang: 'en',
  signIn: 'Sign in',
  continueTo: (client) => html`to continue to <strong>${client}</strong>`,
  account: 'Account',
  localAccount: (product) => `${product} account`,
  username: 'Username',
  password: 'Password',
  otherWays: 'Other ways to sign in',
  signInWith: (provider) => `Sign in with ${provider}`,
  scopes: {
    openid: 'Know who you are (your user id)',
    profile: 'See your username and name',
    email: 'See your email address',
    groups: 'See the groups you belong to',
    offline_access: 'Stay signed in and act for you while you are away',
  },
  otherScope: (scope) => `Use the “${scope}” permission`,
  tokensFor: 'Its tokens will be for:',
  cluster: 'Cluster',
  audience: 'Audience',
  allowAccess: 'Allow access',
  allowClient: (client) => html`Allow ${client}?`,
  consentAsks: (user, client) =>
    html`Signed in as <strong>${user}</strong>. <strong>${client}</strong> asks to:`,
  allow: 'Allow',
  deny: 'Deny',
  remembered: 'Your choice is remembered for this application.',
  connectDevice: 'Connect a device',
  enterCode: 'Enter the code shown on your device.',
  code: 'Code',
  continue: 'Continue',
  allowDevice: 'Allow device',
  allowOnDevice: (client) => html`Allow ${client} on your device?`,
  deviceAsks: (user, code, client) =>
    html`Signed in as <strong>${user}</strong>. A device showing the code <strong id="user-code">${code}</strong> asks to use <strong>${client}</strong> as you.`,
  onlyIfYou:
    'Only allow it if you started this on a device you control. If someone sent you this code, deny.',
  ableTo: 'It will be able to:',
  deviceConnected: 'Device connected',
  deviceConnectedMessage: 'You may return to your device: it is signing you in now.',
  deviceDenied: 'Device denied',
  deviceDeniedMessage: 'The device was not given access. You may close this page.',
  wayBack:
    'Go back to the application you came from and try again. If this happens again, tell whoever runs this sign-in service what you were doing and this request id.',
  requestId: 'Request id',
  signOut: 'Sign out',
  signOutQuestion: 'Sign out?',
  signedInAs: (user) => html`You are signed in as <strong>${user}</strong>.`,
  signedInMessage: (user) => `You are signed in as ${user}.`,
  signedOut: 'Signed out',
  signedOutMessage: 'You are signed out.',
  signedIn: 'Signed in',
  signInFailed: 'Sign-in failed',
  factors: {
    title: 'Two-step verification',
    enterCode: 'Enter the 6-digit code from your authenticator app, or one of your recovery codes.',
    code: 'Code',
    verify: 'Verify',
    setUpTitle: 'Set up an authenticator app',
    setUpRequired: 'A second factor is required to sign in here: set up an authenticator app now.',
    scan: 'Scan the QR code with an authenticator app, or type the key into it, then enter the 6-digit code it shows.',
    qrLabel: 'QR code for your authenticator app',
    key: 'Key',
    name: 'Name',
    defaultName: 'authenticator',
    add: 'Add an authenticator app',
    recoveryTitle: 'Your recovery codes',
    recoveryIntro:
      'Keep these codes somewhere safe. Each one signs you in once if you lose your authenticator. They are shown only now.',
    continue: 'Continue',
    regenerate: 'Make new recovery codes',
    remove: 'Remove',
    none: 'You have no second factor yet.',
    enrolled: 'The authenticator app was added.',
    removed: 'The second factor was removed.',
    listTitle: 'Second factors',
    recoveryLeft: (count) => `${count} unused recovery codes left.`,
    lastUsed: (at) => `last used ${at}`,
    wrongCode: 'That code is not valid. Each code works once.',
    nameTaken: 'You already have a second factor with that name.',
    nameInvalid: 'Give the authenticator a name of at most 64 characters.',
    signInFirst: 'Sign in first to manage your second factors.',
  },
  passkeys: {
    signIn: 'Sign in with a passkey',
    useAsSecondFactor: 'Use a passkey or security key',
    add: 'Add a passkey or security key',
    defaultName: 'Passkey',
    added: 'Passkey added.',
    cancelled: 'The passkey was not used: the browser cancelled or has none for this site.',
    kind: 'passkey',
    created: (at) => `added ${at}`,
    refused: {
      challenge: 'This passkey request expired or was already used. Try again.',
      unknown_credential: 'This passkey is not registered here (it may have been removed).',
      origin: 'This passkey answer came from another site and was refused.',
      user_verification:
        'Signing in with a passkey alone needs your device to verify you (PIN or biometrics). Use a password instead, or a device that verifies you.',
      counter:
        'This security key reported a signature counter that did not move forward; it may have been cloned. Contact your administrator.',
      name_taken: 'You already have a second factor of that name.',
      invalid: 'The passkey answer could not be verified.',
    },
  },
  statusTitles: {},
  errors: {
    invalidCredentials: 'Invalid username or password.',
    disabled: 'This account is disabled.',
    notLinked: (product) => `No ${product} account is linked to this directory account.`,
    enterCredentials: 'Enter your username and password.',
    chooseAccount: 'Choose one of the offered accounts.',
    directoryDown: 'The directory cannot be reached right now. Try again later.',
    notFromThisPage: 'The form was not sent from this page. Go back and try again.',
    notFromSignInPage: 'The form was not sent from this sign-in page. Go back and try again.',
    notFromConsentPage: 'The form was not sent from this consent page. Go back and try again.',
    locked: (minutes) =>
      `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    tooManyCodes: (minutes) =>
      `Too many wrong codes. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    tooManyCodesEverywhere: (minutes) =>
      `Too many wrong codes have been entered here lately, from many places: to keep device codes from being guessed, no code is accepted for now. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    signInExpired:
      'This sign-in request has expired or was started in another browser. Go back to the application and try again.',
    wrongCode: 'That code is not valid or has expired. Check the code on your device, or start again there.',
    codeUsed: 'This code has already been used. To connect the device again, start again on the device.',
    deviceExpired:
      'This device request has expired or was started in another browser. Start again on the device.',
    logoutNotForm: 'The sign-out request must be sent as a form.',
  },
};

const de: Messages = {
  lang: 'de',
  signIn: 'Anmelden',
  continueTo: (client) => html`um mit <strong>${client}</strong> fortzufahren`,
  account: 'Konto',
  localAccount: (product) => `${product}-Konto`,
  username: 'Benutzername',
  password: 'Passwort',
  otherWays: 'Andere Anmeldemöglichkeiten',
  signInWith: (provider) => `Mit ${provider} anmelden`,
  scopes: {
    openid: 'Wissen, wer Sie sind (Ihre Benutzer-ID)',
    profile: 'Ihren Benutzernamen und Namen sehen',
    email: 'Ihre E-Mail-Adresse sehen',
    groups: 'Die Gruppen sehen, denen Sie angehören',
    offline_access: 'Angemeldet bleiben und in Ihrer Abwesenheit für Sie handeln',
  },
  otherScope: (scope) => `Die Berechtigung „${scope}“ nutzen`,
  tokensFor: 'Ihre Tokens gelten für:',
  cluster: 'Cluster',
  audience: 'Zielgruppe',
  allowAccess: 'Zugriff erlauben',
  allowClient: (client) => html`${client} erlauben?`,
  consentAsks: (user, client) =>
    html`Angemeldet als <strong>${user}</strong>. <strong>${client}</strong> möchte:`,
  allow: 'Erlauben',
  deny: 'Ablehnen',
  remembered: 'Ihre Entscheidung wird für diese Anwendung gespeichert.',
  connectDevice: 'Gerät verbinden',
  enterCode: 'Geben Sie den Code ein, den Ihr Gerät anzeigt.',
  code: 'Code',
  continue: 'Weiter',
  allowDevice: 'Gerät erlauben',
  allowOnDevice: (client) => html`${client} auf Ihrem Gerät erlauben?`,
  deviceAsks: (user, code, client) =>
    html`Angemeldet als <strong>${user}</strong>. Ein Gerät, das den Code <strong id="user-code">${code}</strong> anzeigt, möchte <strong>${client}</strong> in Ihrem Namen verwenden.`,
  onlyIfYou:
    'Erlauben Sie das nur, wenn Sie es selbst auf einem Gerät begonnen haben, das Sie kontrollieren. Hat Ihnen jemand diesen Code geschickt, lehnen Sie ab.',
  ableTo: 'Es kann dann:',
  deviceConnected: 'Gerät verbunden',
  deviceConnectedMessage: 'Sie können zu Ihrem Gerät zurückkehren: Es meldet Sie jetzt an.',
  deviceDenied: 'Gerät abgelehnt',
  deviceDeniedMessage: 'Das Gerät hat keinen Zugriff erhalten. Sie können diese Seite schließen.',
  wayBack:
    'Gehen Sie zurück zu der Anwendung, von der Sie kamen, und versuchen Sie es erneut. Passiert es wieder, sagen Sie den Betreibern dieses Anmeldedienstes, was Sie getan haben, und nennen Sie diese Anfrage-ID.',
  requestId: 'Anfrage-ID',
  signOut: 'Abmelden',
  signOutQuestion: 'Abmelden?',
  signedInAs: (user) => html`Sie sind als <strong>${user}</strong> angemeldet.`,
  signedInMessage: (user) => `Sie sind als ${user} angemeldet.`,
  signedOut: 'Abgemeldet',
  signedOutMessage: 'Sie sind abgemeldet.',
  signedIn: 'Angemeldet',
  signInFailed: 'Anmeldung fehlgeschlagen',
  factors: {
    title: 'Bestätigung in zwei Schritten',
    enterCode:
      'Geben Sie den 6-stelligen Code aus Ihrer Authenticator-App oder einen Ihrer Wiederherstellungscodes ein.',
    code: 'Code',
    verify: 'Bestätigen',
    setUpTitle: 'Authenticator-App einrichten',
    setUpRequired:
      'Für die Anmeldung hier ist ein zweiter Faktor nötig: Richten Sie jetzt eine Authenticator-App ein.',
    scan: 'Scannen Sie den QR-Code mit einer Authenticator-App oder tippen Sie den Schlüssel ein, und geben Sie dann den 6-stelligen Code ein, den sie zeigt.',
    qrLabel: 'QR-Code für Ihre Authenticator-App',
    key: 'Schlüssel',
    name: 'Name',
    defaultName: 'Authenticator',
    add: 'Authenticator-App hinzufügen',
    recoveryTitle: 'Ihre Wiederherstellungscodes',
    recoveryIntro:
      'Bewahren Sie diese Codes sicher auf. Jeder meldet Sie einmal an, falls Sie Ihren Authenticator verlieren. Sie werden nur jetzt angezeigt.',
    continue: 'Weiter',
    regenerate: 'Neue Wiederherstellungscodes erzeugen',
    remove: 'Entfernen',
    none: 'Sie haben noch keinen zweiten Faktor.',
    enrolled: 'Die Authenticator-App wurde hinzugefügt.',
    removed: 'Der zweite Faktor wurde entfernt.',
    listTitle: 'Zweite Faktoren',
    recoveryLeft: (count) => `Noch ${count} unbenutzte Wiederherstellungscodes.`,
    lastUsed: (at) => `zuletzt benutzt ${at}`,
    wrongCode: 'Dieser Code ist nicht gültig. Jeder Code gilt nur einmal.',
    nameTaken: 'Sie haben schon einen zweiten Faktor mit diesem Namen.',
    nameInvalid: 'Geben Sie dem Authenticator einen Namen mit höchstens 64 Zeichen.',
    signInFirst: 'Melden Sie sich zuerst an, um Ihre zweiten Faktoren zu verwalten.',
  },
  passkeys: {
    signIn: 'Mit einem Passkey anmelden',
    useAsSecondFactor: 'Passkey oder Sicherheitsschlüssel verwenden',
    add: 'Passkey oder Sicherheitsschlüssel hinzufügen',
    defaultName: 'Passkey',
    added: 'Passkey hinzugefügt.',
    cancelled:
      'Der Passkey wurde nicht verwendet: Der Browser hat abgebrochen oder hat keinen für diese Seite.',
    kind: 'Passkey',
    created: (at) => `hinzugefügt ${at}`,
    refused: {
      challenge: 'Diese Passkey-Anfrage ist abgelaufen oder wurde schon verwendet. Versuchen Sie es erneut.',
      unknown_credential: 'Dieser Passkey ist hier nicht registriert (vielleicht wurde er entfernt).',
      origin: 'Diese Passkey-Antwort kam von einer anderen Seite und wurde abgelehnt.',
      user_verification:
        'Die Anmeldung nur mit einem Passkey verlangt, dass Ihr Gerät Sie prüft (PIN oder Biometrie). Verwenden Sie ein Passwort oder ein Gerät, das Sie prüft.',
      counter:
        'Dieser Sicherheitsschlüssel meldete einen Signaturzähler, der nicht weiterzählte; er könnte kopiert worden sein. Wenden Sie sich an Ihre Administration.',
      name_taken: 'Sie haben schon einen zweiten Faktor mit diesem Namen.',
      invalid: 'Die Passkey-Antwort konnte nicht geprüft werden.',
    },
  },
  statusTitles: {
    400: 'Ungültige Anfrage',
    401: 'Nicht angemeldet',
    403: 'Nicht erlaubt',
    404: 'Nicht gefunden',
    405: 'Methode nicht erlaubt',
    429: 'Zu viele Anfragen',
    500: 'Interner Fehler',
    503: 'Vorübergehend nicht verfügbar',
  },
  errors: {
    invalidCredentials: 'Benutzername oder Passwort ist falsch.',
    disabled: 'Dieses Konto ist deaktiviert.',
    notLinked: (product) => `Mit diesem Verzeichniskonto ist kein ${product}-Konto verknüpft.`,
    enterCredentials: 'Geben Sie Benutzername und Passwort ein.',
    chooseAccount: 'Wählen Sie eines der angebotenen Konten.',
    directoryDown: 'Das Verzeichnis ist gerade nicht erreichbar. Versuchen Sie es später erneut.',
    notFromThisPage:
      'Das Formular wurde nicht von dieser Seite gesendet. Gehen Sie zurück und versuchen Sie es erneut.',
    notFromSignInPage:
      'Das Formular wurde nicht von dieser Anmeldeseite gesendet. Gehen Sie zurück und versuchen Sie es erneut.',
    notFromConsentPage:
      'Das Formular wurde nicht von dieser Zustimmungsseite gesendet. Gehen Sie zurück und versuchen Sie es erneut.',
    locked: (minutes) =>
      `Zu viele fehlgeschlagene Anmeldungen. Versuchen Sie es in ${minutes} Minute${minutes === 1 ? '' : 'n'} erneut.`,
    tooManyCodes: (minutes) =>
      `Zu viele falsche Codes. Versuchen Sie es in ${minutes} Minute${minutes === 1 ? '' : 'n'} erneut.`,
    tooManyCodesEverywhere: (minutes) =>
      `Hier wurden zuletzt von vielen Orten aus zu viele falsche Codes eingegeben: Damit Gerätecodes nicht erraten werden, wird gerade kein Code angenommen. Versuchen Sie es in ${minutes} Minute${minutes === 1 ? '' : 'n'} erneut.`,
    signInExpired:
      'Diese Anmeldung ist abgelaufen oder wurde in einem anderen Browser begonnen. Gehen Sie zurück zur Anwendung und versuchen Sie es erneut.',
    wrongCode:
      'Dieser Code ist ungültig oder abgelaufen. Prüfen Sie den Code auf Ihrem Gerät oder beginnen Sie dort neu.',
    codeUsed:
      'Dieser Code wurde schon verwendet. Um das Gerät erneut zu verbinden, beginnen Sie auf dem Gerät neu.',
    deviceExpired:
      'Diese Geräteanfrage ist abgelaufen oder wurde in einem anderen Browser begonnen. Beginnen Sie auf dem Gerät neu.',
    logoutNotForm: 'Die Abmeldung muss als Formular gesendet werden.',
  },
};

/** Every language's messages. */
export const MESSAGES: Readonly<Record<Locale, Messages>> = { en, de };

const isLocale = (tag: string): tag is Locale => (LOCALES as readonly string[]).includes(tag);

/**
 * The first supported language of a preference list: `ui_locales` (space-separated BCP 47 tags,
 * OIDC Core §3.1.2.1) or `Accept-Language` (comma-separated, with `;q=` weights, RFC 9110
 * §12.5.4). A regional tag matches its language (`de-CH` → `de`); `*` and unknown tags are passed
 * over; undefined when nothing matches.
 * @example preferredLocale('fr-CA, de;q=0.8, en;q=0.5') // 'de'
 */
export function preferredLocale(list: string | undefined): Locale | undefined {
  if (list === undefined) return undefined;
  const ranked = list
    .slice(0, 512)
    .split(/[,\s]+/)
    .map((entry, index) => {
      const [tag = '', ...params] = entry.split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return {
        language: tag.trim().toLowerCase().split('-')[0] ?? '',
        q: q === undefined ? 1 : Number(q),
        index,
      };
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return ranked.map((entry) => entry.language).find(isLocale);
}

/** A stored or sent language tag, when it is one the pages speak. */
export function supportedLocale(tag: string | undefined): Locale | undefined {
  return tag !== undefined && isLocale(tag) ? tag : undefined;
}
