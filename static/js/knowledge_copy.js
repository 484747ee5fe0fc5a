// Copy buttons on recipe blocks and on every code block of a knowledge page.
(function () {
  "use strict";
  function copy(text, button) {
    var done = function () {
      button.textContent = "copied";
      setTimeout(function () { button.textContent = "copy"; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done);
      return;
    }
    // http:// on an internal host has no clipboard API: fall back to a selected textarea
    var area = document.createElement("textarea");
    area.value = text;
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); done(); } finally { document.body.removeChild(area); }
  }
  function init() {
    document.querySelectorAll("pre[data-copy], .kb-body pre").forEach(function (pre) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "kb-copy-btn";
      button.textContent = "copy";
      button.addEventListener("click", function () { copy(pre.innerText, button); });
      pre.appendChild(button);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
