// SPDX-License-Identifier: Apache-2.0
// api.js - the JSON API as the page calls it: the user's token (kept in
// this tab's sessionStorage, sent only as Authorization: Bearer, never in a
// URL), JSON answers, and faults turned into errors carrying their text.

const KEY = 'accord-token';

export function token() {
  return sessionStorage.getItem(KEY) || '';
}

export function setToken(t) {
  if (t) sessionStorage.setItem(KEY, t);
  else sessionStorage.removeItem(KEY);
}

export class Fault extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details || [];
  }
  // What the page shows: the co:Fault's code and text.
  text() {
    const d = this.details.length ? ' (' + this.details.join('; ') + ')' : '';
    return (this.code ? this.code + ': ' : '') + this.message + d;
  }
}

// call(method, path, {body, accept, query}) -> parsed JSON, text or Blob.
export async function call(method, path, opts = {}) {
  const headers = { Accept: opts.accept || 'application/json' };
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  if (opts.body !== undefined) headers['Content-Type'] = 'application/xml';
  let url = path;
  if (opts.query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query)) if (v !== undefined && v !== null) q.set(k, String(v));
    const s = q.toString();
    if (s) url += '?' + s;
  }
  let r;
  try {
    r = await fetch(url, { method, headers, body: opts.body, credentials: 'same-origin', cache: 'no-store' });
  } catch (e) {
    throw new Fault(0, 'Unreachable', 'accordd did not answer: ' + e.message);
  }
  if (!r.ok) throw await faultOf(r);
  if (opts.as === 'text') return r.text();
  if (opts.as === 'blob') return r.blob();
  return r.json();
}

async function faultOf(r) {
  const body = await r.text();
  try {
    const f = JSON.parse(body);
    if (f && typeof f.message === 'string')
      return new Fault(r.status, String(f.code || ''), f.message, (f.details || []).map(String));
  } catch (e) {
    // not JSON: a co:Fault in XML (a text/plain route) or libmicrohttpd's own page
  }
  const m = /<co:Message>([\s\S]*?)<\/co:Message>/.exec(body);
  const text = m ? m[1] : body.replace(/<[^>]*>/g, ' ').trim().slice(0, 300);
  return new Fault(r.status, 'HTTP ' + r.status, text || r.statusText);
}

export function iso(ms) {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
