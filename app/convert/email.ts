import msgreader from '@kenjiuno/msgreader';
import { type AddressObject, simpleParser } from 'mailparser';
import mime from 'mime';

/**
 * E-mail (.eml through mailparser, Outlook .msg through msgreader) as one self-contained HTML document for
 * Chromium: a block with the decoded From, To, Cc, Date and Subject, the HTML body (cid: images turned into
 * data: URIs) or the plain text body, and a list of the attachments. Nothing in the document may load from
 * the network: a Content-Security-Policy allows data: images and inline styles only (remote images in mail
 * are tracking pixels as often as not, and the sender must not make the server fetch anything).
 */

export interface MailAttachment {
  name: string;
  type: string;
  size: number;
  content: Buffer;
  /** Shown in the body through a cid: reference. */
  inline: boolean;
}

export interface Mail {
  from: string;
  to: string;
  cc: string;
  date: string;
  subject: string;
  /** The HTML body as sent (cid: links still in), or null when there is only text. */
  html: string | null;
  text: string;
  attachments: MailAttachment[];
}

const MsgReader = msgreader.default;

const addresses = (a?: AddressObject | AddressObject[]) => (Array.isArray(a) ? a.map((x) => x.text).join(', ') : (a?.text ?? ''));

export async function readEml(buf: Buffer): Promise<Mail> {
  const m = await simpleParser(buf, { keepCidLinks: true });
  const date = m.headerLines.find((h) => h.key === 'date')?.line.replace(/^date:\s*/i, '') ?? m.date?.toUTCString() ?? '';
  const attachments = m.attachments
    // Alternative bodies mailparser cannot render (text/watch-html) come out as nameless "attachments".
    .filter((a) => a.filename || !a.contentType.startsWith('text/'))
    .map((a) => ({
      name: a.filename ?? `attachment.${a.contentType.split('/')[1] ?? 'bin'}`,
      type: a.contentType,
      size: a.size,
      content: a.content,
      inline: false,
      cid: a.cid,
    }));
  return inlineCids({
    from: m.from?.text ?? '',
    to: addresses(m.to),
    cc: addresses(m.cc),
    date,
    subject: m.subject ?? '',
    html: m.html || null,
    text: m.text ?? '',
    attachments,
  });
}

export function readMsg(buf: Buffer): Mail {
  const reader = new MsgReader(new Uint8Array(buf).buffer);
  const d = reader.getFileData();
  if (d.error) throw new Error(d.error);
  const recipients = (kind: string) =>
    (d.recipients ?? [])
      .filter((r) => (r.recipType ?? 'to') === kind)
      .map((r) => (r.name && r.email && r.name.replace(/'/g, '') !== r.email ? `${r.name} <${r.email}>` : r.email || r.name || ''))
      .join(', ');
  let html: string | null = d.bodyHtml ?? null;
  if (!html && d.html) html = new TextDecoder(d.internetCodepage === 65001 || !d.internetCodepage ? 'utf-8' : `windows-${d.internetCodepage}`).decode(d.html);
  const attachments = (d.attachments ?? []).map((a) => {
    const data = reader.getAttachment(a);
    return {
      name: data.fileName || 'attachment',
      type: a.attachMimeTag || mime.getType(data.fileName || '') || '',
      size: data.content.length,
      content: Buffer.from(data.content),
      inline: false,
      cid: a.pidContentId,
    };
  });
  const from = d.senderName && d.senderEmail && d.senderName !== d.senderEmail ? `${d.senderName} <${d.senderEmail}>` : d.senderEmail || d.senderName || '';
  return inlineCids({
    from,
    to: recipients('to'),
    cc: recipients('cc'),
    date: d.messageDeliveryTime ?? d.clientSubmitTime ?? '',
    subject: d.subject ?? '',
    html,
    text: d.body ?? '',
    attachments,
  });
}

/** Replaces cid: references of the HTML body by data: URIs of the attachments they name, and marks those inline. */
function inlineCids(m: Omit<Mail, 'attachments'> & { attachments: (MailAttachment & { cid?: string })[] }): Mail {
  const byCid = new Map(m.attachments.filter((a) => a.cid).map((a) => [a.cid!.replace(/^<|>$/g, '').toLowerCase(), a]));
  const html =
    m.html?.replace(/cid:([^"'\s)>]+)/gi, (ref, id: string) => {
      const a = byCid.get(decodeURIComponent(id).toLowerCase());
      if (!a) return ref;
      a.inline = true;
      return `data:${a.type || 'application/octet-stream'};base64,${a.content.toString('base64')}`;
    }) ?? null;
  return { ...m, html, attachments: m.attachments.map(({ cid: _cid, ...a }) => a) };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:";

/** The body of an HTML mail without its document shell; its <style> elements are kept. */
function bodyOf(html: string): string {
  const styles = (/<head[^>]*>([\s\S]*?)<\/head>/i.exec(html)?.[1] ?? '').match(/<style[\s\S]*?<\/style>/gi) ?? [];
  const body = /<body[^>]*>([\s\S]*)<\/body>/i.exec(html)?.[1] ?? html.replace(/<!doctype[^>]*>|<\/?html[^>]*>|<head[^>]*>[\s\S]*?<\/head>/gi, '');
  return styles.join('\n') + body;
}

function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The printable document. `notes` says, per attachment index, what became of it (e.g. appended as pages). */
export function mailHtml(m: Mail, notes: Map<number, string> = new Map()): string {
  const rows = [
    ['From', m.from],
    ['To', m.to],
    ['Cc', m.cc],
    ['Date', m.date],
    ['Subject', m.subject],
  ]
    .filter(([, v]) => v)
    .map(([k, v]) => `<tr><th>${k}:</th><td>${escapeHtml(v)}</td></tr>`)
    .join('');
  const body = m.html !== null ? bodyOf(m.html) : `<pre class="quire-text">${escapeHtml(m.text)}</pre>`;
  const list = m.attachments.length
    ? `<div class="quire-attachments"><h2>Attachments (${m.attachments.length})</h2><ul>${m.attachments
        .map((a, i) => {
          const note = notes.get(i) ?? (a.inline ? 'shown in the message' : '');
          return `<li>${escapeHtml(a.name)} <span>(${escapeHtml(a.type || 'unknown type')}, ${size(a.size)}${note ? `; ${escapeHtml(note)}` : ''})</span></li>`;
        })
        .join('')}</ul></div>`
    : '';
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CSP}">
<style>
.quire-header { font: 13px/1.4 "DejaVu Sans", "Liberation Sans", sans-serif; border-bottom: 1px solid #999; margin: 0 0 16px; padding: 0 0 8px; }
.quire-header th { text-align: left; vertical-align: top; padding: 1px 12px 1px 0; white-space: nowrap; }
.quire-header td { word-break: break-word; }
.quire-text { font: 13px/1.4 "DejaVu Sans Mono", "Liberation Mono", monospace; white-space: pre-wrap; word-wrap: break-word; }
.quire-attachments { font: 12px/1.4 "DejaVu Sans", "Liberation Sans", sans-serif; border-top: 1px solid #999; margin-top: 16px; }
.quire-attachments h2 { font-size: 13px; }
</style></head><body>
<table class="quire-header">${rows}</table>
${body}
${list}
</body></html>`;
}
