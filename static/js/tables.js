// Wide data tables scroll sideways inside their own box instead of widening the whole page
// (which left the top bar short and pushed the right-hand columns off screen). Only tables
// that actually overflow are wrapped, so narrow tables keep their layout and selectors.
(function () {
  "use strict";
  function wrapWide() {
    var tables = document.querySelectorAll("main table.data");
    for (var i = 0; i < tables.length; i++) {
      var table = tables[i];
      var parent = table.parentElement;
      if (!parent || parent.classList.contains("table-scroll")) continue;
      // Wider than its parent, or (as a grid cell) running past the parent's right edge.
      var past = table.getBoundingClientRect().right > parent.getBoundingClientRect().right + 1;
      if (table.scrollWidth <= parent.clientWidth + 1 && !past) continue;
      var box = document.createElement("div");
      box.className = "table-scroll";
      parent.insertBefore(box, table);
      box.appendChild(table);
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", wrapWide);
  } else {
    wrapWide();
  }
  // Collapsed <details> hide their tables until opened: check again when one opens.
  document.addEventListener("toggle", wrapWide, true);
})();
