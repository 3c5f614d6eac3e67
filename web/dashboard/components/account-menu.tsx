import { useEffect, useRef, useState } from 'preact/hooks';
import { useSession } from '../session-context.ts';

/**
 * The owner's email, opening the plan and the sign-out items. It closes on choosing an item, on a click
 * or tap anywhere else, on Escape (focus back on its button) and when the route changes.
 */
export function AccountMenu({ route }: { route: string }) {
  const { session, signOut } = useSession();
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => setOpen(false), [route]);
  useEffect(() => {
    if (!open) return;
    const outside = (event: Event) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false);
    };
    // pointerdown, not click: a tap that starts a scroll elsewhere closes it too. Listened for once the
    // menu is drawn: the tap that opened it must not close it.
    document.addEventListener('pointerdown', outside);
    document.addEventListener('focusin', outside);
    return () => {
      document.removeEventListener('pointerdown', outside);
      document.removeEventListener('focusin', outside);
    };
  }, [open]);
  // Escape is heard where the focus is (the button or an item), from the moment the menu opens: a
  // listener added by an effect came a frame late, and an Escape pressed before it was lost.
  const escape = (event: KeyboardEvent) => {
    if (!open || event.key !== 'Escape') return;
    setOpen(false);
    button.current?.focus();
  };
  const choose = (everywhere: boolean) => {
    setOpen(false);
    void signOut(everywhere);
  };
  return (
    <div class="account" ref={root} onKeyDown={escape}>
      <button
        ref={button}
        type="button"
        class="button ghost account-button"
        aria-haspopup="menu"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        {session.user.email}
      </button>
      {open && (
        <div class="menu" role="menu">
          <p class="muted small">Plan: {session.user.plan}</p>
          <button type="button" class="button ghost signout" role="menuitem" onClick={() => choose(false)}>
            Sign out
          </button>
          <button type="button" class="button ghost signout-everywhere" role="menuitem" onClick={() => choose(true)}>
            Sign out everywhere
          </button>
        </div>
      )}
    </div>
  );
}
