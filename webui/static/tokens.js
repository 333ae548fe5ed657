// Tokens page: copy a new token's secret to the clipboard.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const btn = document.getElementById("copy-secret");
  if (!btn) return;
  const input = document.getElementById(btn.dataset.copy);
  const status = document.getElementById("copy-status");
  btn.addEventListener("click", async () => {
    let ok = false;
    try {
      await navigator.clipboard.writeText(input.value);
      ok = true;
    } catch (e) {
      input.focus();
      input.select();
      try { ok = document.execCommand("copy"); } catch (e2) { ok = false; }
    }
    status.textContent = ok ? "Copied." : "Copy failed: select the secret and copy it by hand.";
  });
});
