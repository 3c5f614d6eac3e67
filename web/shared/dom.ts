/** What {@link h} sets on a new element. Text always goes through `textContent`, never markup. */
export interface ElementProps {
  class?: string;
  text?: string;
  attrs?: Record<string, string>;
}

/** Creates an element: the widget's and the console's only way of building DOM. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: ElementProps = {},
  children: readonly Node[] = [],
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.class) element.className = props.class;
  if (props.text !== undefined) element.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) element.setAttribute(name, value);
  element.append(...children);
  return element;
}
