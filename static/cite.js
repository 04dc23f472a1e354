/* Copy buttons of the claims' citation pages (cite/<claim id>.html): each copies the text of the
   <pre> its data-copy names. Offline; the clipboard API where the page may use it, else a
   selection and execCommand("copy"), else the text is left selected for Ctrl+C. */
(function () {
  "use strict";
  function selectText(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  function done(button, label) {
    button.textContent = label;
    window.setTimeout(function () { button.textContent = "Copy"; }, 2000);
  }
  function fallback(button, node) {
    selectText(node);
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    done(button, ok ? "Copied" : "Selected: press Ctrl+C");
  }
  document.querySelectorAll("button.cite-copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var node = document.getElementById(button.getAttribute("data-copy"));
      if (!node) { return; }
      var text = node.textContent;
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(
          function () { done(button, "Copied"); },
          function () { fallback(button, node); }
        );
      } else {
        fallback(button, node);
      }
    });
  });
})();
