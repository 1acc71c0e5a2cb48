/// <reference lib="dom" />
/**
 * A tiny element builder. Text always goes in as text nodes (never parsed as HTML), so message
 * contents, which anyone who can append to a thread controls, cannot inject markup or script into the
 * page that holds the person's token.
 */

/** What an element may contain: nodes, text, or nothing (skipped, for conditional children). */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

/** Attribute values: a string sets it, `true` sets it empty, `false`/undefined leave it out. */
export type Attrs = Record<string, string | number | boolean | undefined>;

/** Creates `<tag attrs>children</tag>`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child as readonly Child[]);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** A button (type=button, so it never submits a surrounding form) with a click handler. */
export function button(
  label: Child,
  onClick: (ev: MouseEvent) => void,
  attrs: Attrs = {},
): HTMLButtonElement {
  const el = h('button', { type: 'button', ...attrs }, label);
  el.addEventListener('click', onClick);
  return el;
}

/**
 * A button that shows and hides a region, with `aria-expanded`/`aria-controls` kept in step, so
 * screen readers announce the state. The labels say what a press will do.
 */
export function disclosure(
  id: string,
  labels: { show: string; hide: string },
  region: HTMLElement,
): [HTMLButtonElement, HTMLElement] {
  region.id = id;
  region.hidden = true;
  const toggle = button(labels.show, () => {
    region.hidden = !region.hidden;
    toggle.setAttribute('aria-expanded', String(!region.hidden));
    toggle.textContent = region.hidden ? labels.show : labels.hide;
  });
  toggle.setAttribute('aria-expanded', 'false');
  toggle.setAttribute('aria-controls', id);
  return [toggle, region];
}

/** A number with thousands separators (token counts read better that way). */
export function num(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * A count with its noun, singular for one: `1 message`, `2 messages`, `3 summaries` (given `many`).
 * Every count the inspector shows goes through it.
 */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${num(n)} ${n === 1 ? one : many}`;
}
