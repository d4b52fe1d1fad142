import { AppError } from '../errors.js';
import type { Invoice, Party } from './cii.js';

/** A readable rendering of a CII invoice as one self-contained HTML page (no external resources), for printing. */

export type Rgb = [number, number, number];

export interface RenderOptions {
  locale: string;
  labelLanguage: 'en' | 'de' | 'fr';
  currencyDisplay: 'symbol' | 'narrowSymbol' | 'code' | 'name';
  /** yyyy, yy, MM, dd tokens; none: the locale's medium date. */
  dateFormat?: string;
  decimalPrecision: number;
  font: string;
  boldFont?: string;
  textColor: Rgb;
  mutedTextColor: Rgb;
  accentColor: Rgb;
  borderColor: Rgb;
  tableHeaderColor: Rgb;
  tableAlternateColor: Rgb;
  footerMessage?: string;
  logo?: { mime: 'image/png' | 'image/jpeg'; data: Buffer; corner: 'top-left' | 'top-right' | 'bottom-left' | 'bottom-right' };
}

export const DEFAULT_RENDER: RenderOptions = {
  locale: 'en-GB',
  labelLanguage: 'en',
  currencyDisplay: 'symbol',
  decimalPrecision: 2,
  font: 'Liberation Sans',
  textColor: [33, 37, 41],
  mutedTextColor: [108, 117, 125],
  accentColor: [0, 92, 171],
  borderColor: [206, 212, 218],
  tableHeaderColor: [233, 239, 246],
  tableAlternateColor: [248, 249, 250],
};

/** Font tokens of pdfRest's font list mapped to the metric-compatible fonts Debian ships (fonts-liberation2). */
const FONT_TOKENS: Record<string, string> = {
  arial: 'Liberation Sans',
  arialbold: 'Liberation Sans',
  helvetica: 'Liberation Sans',
  times: 'Liberation Serif',
  timesnewroman: 'Liberation Serif',
  courier: 'Liberation Mono',
  couriernew: 'Liberation Mono',
};

/** A font name as a CSS family: a known token, or an installed family name (letters, digits, spaces, - and _). */
export function fontFamily(name: string): string {
  const token = name.toLowerCase().replace(/[\s_-]/g, '');
  if (token in FONT_TOKENS) return FONT_TOKENS[token];
  if (!/^[\p{L}\p{N} _-]{1,64}$/u.test(name)) throw new AppError('out_of_range', `${name} is not within the acceptable range for render_options.font`);
  return name.trim();
}

export const cmykToRgb = ([c, m, y, k]: number[]): Rgb => {
  const f = (x: number) => Math.round(255 * (1 - x / 100) * (1 - k / 100));
  return [f(c), f(m), f(y)];
};

type Labels = Record<
  | 'number'
  | 'date'
  | 'due'
  | 'delivery'
  | 'buyerRef'
  | 'order'
  | 'seller'
  | 'buyer'
  | 'vatId'
  | 'taxId'
  | 'pos'
  | 'item'
  | 'qty'
  | 'price'
  | 'vat'
  | 'amount'
  | 'lineTotal'
  | 'allowance'
  | 'charge'
  | 'taxBasis'
  | 'vatOn'
  | 'vatTotal'
  | 'grandTotal'
  | 'prepaid'
  | 'rounding'
  | 'payable'
  | 'payment'
  | 'iban'
  | 'bic'
  | 'terms'
  | 'notes'
  | 'footer',
  string
> & { types: Record<string, string> };

const LABELS: Record<RenderOptions['labelLanguage'], Labels> = {
  en: {
    types: {
      '380': 'Invoice',
      '381': 'Credit note',
      '384': 'Corrected invoice',
      '389': 'Self-billed invoice',
      '326': 'Partial invoice',
      '386': 'Prepayment invoice',
      '751': 'Invoice information',
    },
    number: 'Invoice number',
    date: 'Invoice date',
    due: 'Due date',
    delivery: 'Delivery date',
    buyerRef: 'Buyer reference',
    order: 'Order reference',
    seller: 'Seller',
    buyer: 'Bill to',
    vatId: 'VAT ID',
    taxId: 'Tax number',
    pos: 'Pos.',
    item: 'Item',
    qty: 'Quantity',
    price: 'Unit price',
    vat: 'VAT',
    amount: 'Net amount',
    lineTotal: 'Sum of line net amounts',
    allowance: 'Allowance',
    charge: 'Charge',
    taxBasis: 'Total without VAT',
    vatOn: 'VAT {rate} % on {basis}',
    vatTotal: 'Total VAT',
    grandTotal: 'Total with VAT',
    prepaid: 'Paid amount',
    rounding: 'Rounding',
    payable: 'Amount due',
    payment: 'Payment',
    iban: 'IBAN',
    bic: 'BIC',
    terms: 'Payment terms',
    notes: 'Notes',
    footer: 'Electronic invoice ({profile}); the embedded XML ({file}) carries the invoice data.',
  },
  de: {
    types: {
      '380': 'Rechnung',
      '381': 'Gutschrift',
      '384': 'Rechnungskorrektur',
      '389': 'Gutschrift (Selbstfakturierung)',
      '326': 'Teilrechnung',
      '386': 'Vorauszahlungsrechnung',
      '751': 'Rechnungsinformation',
    },
    number: 'Rechnungsnummer',
    date: 'Rechnungsdatum',
    due: 'Fällig am',
    delivery: 'Lieferdatum',
    buyerRef: 'Käuferreferenz',
    order: 'Bestellnummer',
    seller: 'Verkäufer',
    buyer: 'Rechnungsempfänger',
    vatId: 'USt-IdNr.',
    taxId: 'Steuernummer',
    pos: 'Pos.',
    item: 'Artikel',
    qty: 'Menge',
    price: 'Einzelpreis',
    vat: 'USt.',
    amount: 'Nettobetrag',
    lineTotal: 'Summe der Positionen',
    allowance: 'Nachlass',
    charge: 'Zuschlag',
    taxBasis: 'Gesamtbetrag netto',
    vatOn: 'USt. {rate} % auf {basis}',
    vatTotal: 'Umsatzsteuer gesamt',
    grandTotal: 'Gesamtbetrag brutto',
    prepaid: 'Bereits gezahlt',
    rounding: 'Rundung',
    payable: 'Zahlbetrag',
    payment: 'Zahlung',
    iban: 'IBAN',
    bic: 'BIC',
    terms: 'Zahlungsbedingungen',
    notes: 'Hinweise',
    footer: 'Elektronische Rechnung ({profile}); die eingebettete XML-Datei ({file}) enthält die Rechnungsdaten.',
  },
  fr: {
    types: {
      '380': 'Facture',
      '381': 'Avoir',
      '384': 'Facture rectificative',
      '389': 'Autofacture',
      '326': 'Facture partielle',
      '386': "Facture d'acompte",
      '751': 'Information de facture',
    },
    number: 'Numéro de facture',
    date: 'Date de facture',
    due: "Date d'échéance",
    delivery: 'Date de livraison',
    buyerRef: "Référence de l'acheteur",
    order: 'Référence de commande',
    seller: 'Vendeur',
    buyer: 'Facturé à',
    vatId: 'N° TVA',
    taxId: 'N° fiscal',
    pos: 'N°',
    item: 'Article',
    qty: 'Quantité',
    price: 'Prix unitaire',
    vat: 'TVA',
    amount: 'Montant HT',
    lineTotal: 'Total des lignes HT',
    allowance: 'Remise',
    charge: 'Frais',
    taxBasis: 'Total HT',
    vatOn: 'TVA {rate} % sur {basis}',
    vatTotal: 'Total TVA',
    grandTotal: 'Total TTC',
    prepaid: 'Déjà payé',
    rounding: 'Arrondi',
    payable: 'Net à payer',
    payment: 'Paiement',
    iban: 'IBAN',
    bic: 'BIC',
    terms: 'Conditions de paiement',
    notes: 'Notes',
    footer: 'Facture électronique ({profile}) ; le fichier XML joint ({file}) contient les données de la facture.',
  },
};

const UNITS: Record<string, Record<RenderOptions['labelLanguage'], string>> = {
  C62: { en: 'pcs', de: 'Stk.', fr: 'pce' },
  H87: { en: 'pcs', de: 'Stk.', fr: 'pce' },
  XPP: { en: 'pcs', de: 'Stk.', fr: 'pce' },
  HUR: { en: 'h', de: 'Std.', fr: 'h' },
  DAY: { en: 'days', de: 'Tage', fr: 'jours' },
  MON: { en: 'months', de: 'Monate', fr: 'mois' },
  KGM: { en: 'kg', de: 'kg', fr: 'kg' },
  MTR: { en: 'm', de: 'm', fr: 'm' },
  LTR: { en: 'l', de: 'l', fr: 'l' },
  KWH: { en: 'kWh', de: 'kWh', fr: 'kWh' },
  LS: { en: 'lump sum', de: 'pauschal', fr: 'forfait' },
};

const esc = (s: string | undefined) => (s ?? '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const css = (c: Rgb) => `rgb(${c.join(',')})`;

/** Whether the locale is one Intl knows (a bad one is the client's error, 400). */
export function checkLocale(locale: string): void {
  try {
    new Intl.NumberFormat(locale);
  } catch {
    throw new AppError('out_of_range', `${locale} is not within the acceptable range for render_options.locale`);
  }
}

export function renderInvoiceHtml(inv: Invoice, o: RenderOptions): string {
  const L = LABELS[o.labelLanguage];
  const decimalsOf = (s: string | undefined) => (s?.includes('.') ? s.split('.')[1].length : 0);
  const money = (s: string | undefined, precision = o.decimalPrecision) => {
    if (s === undefined) return '';
    const n = Number(s);
    if (!Number.isFinite(n)) return esc(s);
    const digits = { minimumFractionDigits: precision, maximumFractionDigits: precision };
    try {
      return esc(
        new Intl.NumberFormat(o.locale, { style: 'currency', currency: inv.currency ?? 'EUR', currencyDisplay: o.currencyDisplay, ...digits }).format(n),
      );
    } catch {
      return esc(`${new Intl.NumberFormat(o.locale, digits).format(n)} ${inv.currency ?? ''}`.trim());
    }
  };
  const num = (s: string | undefined) =>
    s === undefined || !Number.isFinite(Number(s)) ? esc(s) : esc(new Intl.NumberFormat(o.locale, { maximumFractionDigits: 4 }).format(Number(s)));
  const date = (s: string | undefined) => {
    const m = /^(\d{4})(\d{2})(\d{2})$/.exec(s ?? '');
    if (!m) return esc(s);
    if (o.dateFormat) return esc(o.dateFormat.replace(/yyyy|yy|MM|dd/g, (t) => (t === 'yyyy' ? m[1] : t === 'yy' ? m[1].slice(2) : t === 'MM' ? m[2] : m[3])));
    return esc(new Intl.DateTimeFormat(o.locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]))));
  };
  const party = (title: string, p: Party) =>
    `<div class="party"><div class="label">${esc(title)}</div><div class="name">${esc(p.name)}</div>` +
    p.address.map((a) => `<div>${esc(a)}</div>`).join('') +
    `<div>${esc([p.postcode, p.city].filter(Boolean).join(' '))}${p.country ? ` (${esc(p.country)})` : ''}</div>` +
    (p.vatId ? `<div class="muted">${esc(L.vatId)}: ${esc(p.vatId)}</div>` : '') +
    (p.taxId ? `<div class="muted">${esc(L.taxId)}: ${esc(p.taxId)}</div>` : '') +
    (p.email ? `<div class="muted">${esc(p.email)}</div>` : '') +
    '</div>';
  const meta: [string, string | undefined][] = [
    [L.number, esc(inv.number)],
    [L.date, date(inv.issueDate)],
    [L.due, inv.dueDate && date(inv.dueDate)],
    [L.delivery, inv.deliveryDate && date(inv.deliveryDate)],
    [L.buyerRef, inv.buyerReference && esc(inv.buyerReference)],
    [L.order, inv.orderReference && esc(inv.orderReference)],
  ];
  const logo = o.logo ? `<img class="logo" alt="" src="data:${o.logo.mime};base64,${o.logo.data.toString('base64')}">` : '';
  const logoAt = (where: 'top' | 'bottom', side: 'left' | 'right') => (o.logo && o.logo.corner === `${where}-${side}` ? logo : '');
  const lines = inv.lines
    .map(
      (l, i) =>
        `<tr><td>${esc(l.id ?? String(i + 1))}</td><td><div class="name">${esc(l.name)}</div>${l.description ? `<div class="muted">${esc(l.description)}</div>` : ''}</td>` +
        `<td class="r">${num(l.quantity)} ${esc(UNITS[l.unit ?? '']?.[o.labelLanguage] ?? l.unit)}</td><td class="r">${money(l.netPrice, Math.max(o.decimalPrecision, Math.min(4, decimalsOf(l.netPrice))))}</td>` +
        `<td class="r">${l.vatRate !== undefined ? `${num(l.vatRate)} %` : esc(l.vatCategory)}</td><td class="r">${money(l.netAmount)}</td></tr>`,
    )
    .join('');
  const t = inv.totals;
  const row = (label: string, value: string, cls = '') => `<tr class="${cls}"><td>${esc(label)}</td><td class="r">${value}</td></tr>`;
  const totals = [
    t.lineTotal !== undefined && row(L.lineTotal, money(t.lineTotal)),
    ...inv.charges.map((c) => row(`${c.charge ? L.charge : L.allowance}${c.reason ? `: ${c.reason}` : ''}`, `${c.charge ? '' : '−'}${money(c.amount)}`)),
    t.taxBasis !== undefined && row(L.taxBasis, money(t.taxBasis)),
    ...inv.taxes.map((x) =>
      row(
        L.vatOn
          .replace('{rate}', x.rate !== undefined ? new Intl.NumberFormat(o.locale).format(Number(x.rate)) : (x.category ?? ''))
          .replace('{basis}', x.basis !== undefined ? unescapeHtml(money(x.basis)) : ''),
        money(x.amount),
      ),
    ),
    t.taxTotal !== undefined && inv.taxes.length !== 1 && row(L.vatTotal, money(t.taxTotal)),
    t.grandTotal !== undefined && row(L.grandTotal, money(t.grandTotal), 'strong'),
    t.prepaid !== undefined && row(L.prepaid, money(t.prepaid)),
    t.rounding !== undefined && row(L.rounding, money(t.rounding)),
    t.due !== undefined && row(L.payable, money(t.due), 'due'),
  ]
    .filter(Boolean)
    .join('');
  const payment = inv.payment
    .filter((p) => p.iban || p.info || p.bic)
    .map((p) =>
      [p.info && esc(p.info), p.accountName && esc(p.accountName), p.iban && `${L.iban}: ${esc(p.iban)}`, p.bic && `${L.bic}: ${esc(p.bic)}`]
        .filter(Boolean)
        .join(' · '),
    )
    .join('<br>');
  const profile = inv.profile ? `Factur-X / ZUGFeRD ${inv.profile.level}` : 'CII';
  const footer = L.footer.replace('{profile}', profile).replace('{file}', inv.profile?.fileName ?? 'factur-x.xml');
  const bold = o.boldFont ? `font-family: "${fontFamily(o.boldFont)}", "${o.font}", sans-serif;` : '';
  return `<!doctype html><html lang="${esc(o.labelLanguage)}"><head><meta charset="utf-8"><title>${esc(L.types[inv.typeCode ?? ''] ?? L.types['380'])} ${esc(inv.number)}</title><style>
* { box-sizing: border-box; }
body { margin: 0; font-family: "${o.font}", "DejaVu Sans", sans-serif; font-size: 10pt; color: ${css(o.textColor)}; line-height: 1.35; }
.muted { color: ${css(o.mutedTextColor)}; font-size: 9pt; }
.label { color: ${css(o.mutedTextColor)}; font-size: 8pt; text-transform: uppercase; letter-spacing: .04em; margin-bottom: 2pt; }
.name, h1, .strong td, .due td { font-weight: bold; ${bold} }
header { display: flex; justify-content: space-between; align-items: flex-start; border-bottom: 2pt solid ${css(o.accentColor)}; padding-bottom: 8pt; margin-bottom: 14pt; }
h1 { color: ${css(o.accentColor)}; font-size: 20pt; margin: 0 0 4pt 0; }
.logo { max-height: 60pt; max-width: 180pt; }
.parties { display: flex; gap: 24pt; margin-bottom: 14pt; }
.party { flex: 1; }
table { border-collapse: collapse; width: 100%; }
table.meta td { padding: 1pt 8pt 1pt 0; }
table.lines { margin: 10pt 0; }
table.lines th { background: ${css(o.tableHeaderColor)}; text-align: left; font-size: 8.5pt; padding: 4pt; border-bottom: 1pt solid ${css(o.borderColor)}; }
table.lines td { padding: 4pt; border-bottom: 0.5pt solid ${css(o.borderColor)}; vertical-align: top; }
table.lines tbody tr:nth-child(even) td { background: ${css(o.tableAlternateColor)}; }
table.lines tr { break-inside: avoid; }
.r { text-align: right; white-space: nowrap; }
table.totals { width: 55%; margin-left: auto; }
table.totals td { padding: 2pt 4pt; }
table.totals .due td { border-top: 1pt solid ${css(o.accentColor)}; color: ${css(o.accentColor)}; font-size: 11pt; }
section { margin-top: 12pt; break-inside: avoid; }
footer { margin-top: 18pt; border-top: 0.5pt solid ${css(o.borderColor)}; padding-top: 6pt; }
.bottom { display: flex; justify-content: space-between; margin-top: 12pt; }
</style></head><body>
<header><div>${logoAt('top', 'left')}<h1>${esc(L.types[inv.typeCode ?? ''] ?? L.types['380'])}</h1>${party(L.seller, inv.seller)}</div>
<div>${logoAt('top', 'right')}<table class="meta">${meta
    .filter(([, v]) => v)
    .map(([k, v]) => `<tr><td class="muted">${esc(k)}</td><td>${v}</td></tr>`)
    .join('')}</table></div></header>
<div class="parties">${party(L.buyer, inv.buyer)}</div>
${
  inv.lines.length
    ? `<table class="lines"><thead><tr><th>${esc(L.pos)}</th><th>${esc(L.item)}</th><th class="r">${esc(L.qty)}</th><th class="r">${esc(L.price)}</th><th class="r">${esc(L.vat)}</th><th class="r">${esc(L.amount)}</th></tr></thead><tbody>${lines}</tbody></table>`
    : ''
}
<table class="totals">${totals}</table>
${payment || inv.paymentTerms ? `<section><div class="label">${esc(L.payment)}</div>${inv.paymentTerms ? `<div>${esc(L.terms)}: ${esc(inv.paymentTerms)}</div>` : ''}${payment ? `<div>${payment}</div>` : ''}</section>` : ''}
${inv.notes.length ? `<section><div class="label">${esc(L.notes)}</div>${inv.notes.map((n) => `<div>${esc(n).replace(/\n/g, '<br>')}</div>`).join('')}</section>` : ''}
${o.logo?.corner.startsWith('bottom') ? `<div class="bottom"><div>${logoAt('bottom', 'left')}</div><div>${logoAt('bottom', 'right')}</div></div>` : ''}
<footer class="muted">${o.footerMessage ? `<div>${esc(o.footerMessage)}</div>` : ''}<div>${esc(footer)}</div></footer>
</body></html>`;
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"');

/** Width and height from a PNG or JPEG header, or null when the bytes are neither (checked before any decoding). */
export function logoSize(b: Buffer): { mime: 'image/png' | 'image/jpeg'; width: number; height: number } | null {
  if (b.length > 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR')
    return { mime: 'image/png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length > 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return null;
      const marker = b[i + 1];
      const len = b.readUInt16BE(i + 2);
      // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker))
        return { mime: 'image/jpeg', height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
      i += 2 + len;
    }
  }
  return null;
}
