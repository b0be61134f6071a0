// Building DOM and SVG without markup strings: text always goes in as text nodes and
// attributes through setAttribute, so strings from a capture can never become markup
// or script. There is deliberately no way to set innerHTML or an event attribute here.

const SVG_NS = 'http://www.w3.org/2000/svg';

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [name, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    const lower = name.toLowerCase();
    if (lower.startsWith('on') || lower === 'style' || lower === 'href' || lower === 'src' || lower === 'srcdoc' || lower === 'xlink:href') {
      throw new Error(`dom: refusing to set attribute ${name}`);
    }
    el.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(el, children) {
  for (const child of children) {
    if (child == null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

/** An HTML element: `h('p', {class: 'x'}, 'text', h('b', null, 'bold'))`. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Sets an element's text. */
export function text(el, value) {
  el.textContent = value == null ? '' : String(value);
  return el;
}
