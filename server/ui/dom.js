// SPDX-License-Identifier: Apache-2.0
// dom.js - building the page's elements.  Server values only ever become
// text nodes or attribute values, never markup.

const SVG = 'http://www.w3.org/2000/svg';

function fill(e, attrs, kids) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else if (k === 'on') for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of kids) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

export function h(tag, attrs, ...kids) {
  return fill(document.createElement(tag), attrs, kids);
}

export function s(tag, attrs, ...kids) {
  return fill(document.createElementNS(SVG, tag), attrs, kids);
}

// e.append(...kids) without the kids that are null, undefined or false
// (the DOM's own append writes them as the text "null").
export function add(e, ...kids) {
  return fill(e, null, kids);
}

export function clear(e) {
  while (e.firstChild) e.removeChild(e.firstChild);
  return e;
}

export function when(ms) {
  if (!ms && ms !== 0) return '';
  return new Date(ms).toISOString().replace('T', ' ').replace(/:\d\d\.\d{3}Z$/, ' UTC');
}

export function table(head, rows) {
  return h('table', {},
    h('thead', {}, h('tr', {}, ...head.map((c) => h('th', { text: c })))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c) => (c instanceof Node ? h('td', {}, c) : h('td', { text: c ?? '' })))))));
}
