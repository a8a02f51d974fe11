// @ts-check
/**
 * The editors behind a `<details class="popover">` (request settings, the
 * raw RunAgentInput, attach) open over the page instead of pushing the
 * timeline down: what the page is about stays where it was. A popover
 * closes as its summary is clicked again, on Escape (focus back on its
 * summary), or when a click lands outside it, as menus do.
 */

/** @returns {HTMLDetailsElement[]} */
const openPopovers = () => [...document.querySelectorAll("details.popover[open]")].filter((el) => el instanceof HTMLDetailsElement);

document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  for (const popover of openPopovers()) {
    if (!popover.contains(document.activeElement) && document.activeElement !== document.body) continue;
    popover.open = false;
    popover.querySelector("summary")?.focus();
  }
});

// Closing on a click outside keeps at most the popover in use open, so two never overlap.
document.addEventListener("pointerdown", (event) => {
  const target = event.target;
  if (!(target instanceof Node)) return;
  for (const popover of openPopovers()) if (!popover.contains(target)) popover.open = false;
});
