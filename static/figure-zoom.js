// Click a figure to see it at full size: an overlay over the page with the image at its natural
// resolution (the book stores PNGs at twice their display size); click, or press Escape, to close.
// No network and no library: plain DOM, loaded from the book's own static folder.
(function () {
  "use strict";

  function close(overlay) {
    if (overlay && overlay.parentNode) {
      overlay.parentNode.removeChild(overlay);
    }
    document.body.classList.remove("figure-zoom-open");
  }

  function open(img) {
    var overlay = document.createElement("div");
    overlay.className = "figure-zoom-overlay";
    overlay.setAttribute("role", "dialog");
    overlay.setAttribute("aria-label", "Figure at full size (click or press Escape to close)");
    var big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt || "";
    overlay.appendChild(big);
    overlay.addEventListener("click", function () {
      close(overlay);
    });
    function onKey(event) {
      if (event.key === "Escape") {
        close(overlay);
        document.removeEventListener("keydown", onKey);
      }
    }
    document.addEventListener("keydown", onKey);
    document.body.classList.add("figure-zoom-open");
    document.body.appendChild(overlay);
  }

  function setup() {
    var images = document.querySelectorAll("main img");
    for (var i = 0; i < images.length; i++) {
      var img = images[i];
      var link = img.closest("a");
      // Sphinx links an image shown below its stored size to the image file (a.image-reference):
      // that link opens the overlay instead (a middle click still opens the file in a new tab).
      // Any other link around an image is left alone.
      if (link && !link.classList.contains("image-reference")) {
        continue;
      }
      img.classList.add("figure-zoomable");
      img.setAttribute("title", "Click to open at full size");
      img.addEventListener("click", function (event) {
        event.preventDefault();
        open(event.currentTarget);
      });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
