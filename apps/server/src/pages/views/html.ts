import type { PageLook } from '../look.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

/** A fragment of trusted HTML; interpolated values are escaped unless they are fragments too. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** Tagged template that escapes every interpolated value except {@link Html} fragments and arrays of them. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    const items = Array.isArray(value) ? value : [value];
    for (const item of items) {
      if (item instanceof Html) out += item.text;
      else if (item !== undefined && item !== null && item !== false) out += escapeHtml(String(item));
    }
    out += strings[i + 1] ?? '';
  });
  return new Html(out);
}

/** The page around every view: readable on a phone, works without JavaScript. */
export function page(options: { title: string; look: PageLook; body: Html }): string {
  const { look } = options;
  return html`<!doctype html>
<html lang="${look.t.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${options.title} · ${look.productName}</title>
<link rel="stylesheet" href="${look.assetsPath}/idgate.css">
</head>
<body>
<main class="card">
<header class="brand">${look.logoPath === undefined ? undefined : html`<img src="${look.logoPath}" alt="" class="logo">`}<span>${look.productName}</span></header>
${options.body}
</main>
</body>
</html>
`.text;
}

/** The stylesheet of the pages, in the operator's colours (checked to be `#rgb` or `#rrggbb`). */
export const stylesheet = (colors: {
  primary: string;
  background: string;
}): string => `*,*::before,*::after{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:1rem;
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:${colors.background};color:#111827}
.card{width:100%;max-width:24rem;background:#fff;border-radius:.75rem;padding:2rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.375rem;margin:0 0 1rem}
p{margin:.5rem 0 1rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
select,input[type=text],input[type=password]{width:100%;padding:.625rem .75rem;font-size:1rem;border:1px solid #9ca3af;border-radius:.5rem}
input:focus,button:focus,a:focus{outline:3px solid ${colors.primary};outline-offset:2px}
button{width:100%;margin-top:1.25rem;padding:.75rem;font-size:1rem;font-weight:600;border:0;border-radius:.5rem;background:${colors.primary};color:#fff;cursor:pointer}
button.secondary{background:#e5e7eb;color:#111827;margin-top:.5rem}
.alert{padding:.75rem;border-radius:.5rem;background:#fef2f2;color:#991b1b;border:1px solid #fecaca}
.scopes{padding-left:1.25rem}
.providers{margin-top:1.5rem;border-top:1px solid #e5e7eb;padding-top:1rem}
.providers a{display:block;text-align:center;padding:.625rem;margin-top:.5rem;border:1px solid #9ca3af;border-radius:.5rem;color:#111827;text-decoration:none}
.muted{color:#4b5563;font-size:.875rem}
code{word-break:break-all}
.brand{display:flex;align-items:center;gap:.5rem;margin:0 0 1rem;font-weight:600;color:#374151}
.logo{max-height:2.5rem;max-width:10rem}
`;
