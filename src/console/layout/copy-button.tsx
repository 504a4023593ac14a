/**
 * A "Copy" button for a text field or code block. It is hidden until the script runs, so without
 * JavaScript the page simply shows selectable text. The script is inline and runs only because it
 * carries this response's CSP nonce.
 */
export const COPY_SCRIPT = `document.querySelectorAll("button[data-copy]").forEach(function (b) {
  b.hidden = false;
  b.addEventListener("click", function () {
    var id = b.getAttribute("data-copy"), t = document.getElementById(id), s = document.getElementById(id + "-status");
    var v = t.tagName === "INPUT" ? t.value : t.textContent;
    navigator.clipboard.writeText(v).then(function () { s.textContent = "Copied to the clipboard."; },
      function () { if (t.select) t.select(); s.textContent = "Could not copy: select the text and copy it."; });
  });
});`;

export function CopyButton(props: { target: string; label: string }) {
  return (
    <>
      <button type="button" class="secondary" data-copy={props.target} aria-label={props.label} hidden>
        Copy
      </button>
      <span id={`${props.target}-status`} role="status" class="muted"></span>
    </>
  );
}

export function CopyScript(props: { nonce: string }) {
  return <script nonce={props.nonce} dangerouslySetInnerHTML={{ __html: COPY_SCRIPT }} />;
}
