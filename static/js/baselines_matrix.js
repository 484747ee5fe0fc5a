// Version matrix heat map: a click on a cell opens its comparison (the cell's URL is in
// customdata). Waits for charts.js to draw the figure (it sets data-rendered).
(function () {
  "use strict";
  function attach(el) {
    if (!window.Plotly || !el.on) return false;
    el.on("plotly_click", function (event) {
      var point = event.points && event.points[0];
      if (point && point.customdata) window.location.href = point.customdata;
    });
    return true;
  }
  function watch() {
    document.querySelectorAll("[data-click-links]").forEach(function (el) {
      if (el.dataset.rendered === "true" && attach(el)) return;
      new MutationObserver(function (_, observer) {
        if (el.dataset.rendered === "true" && attach(el)) observer.disconnect();
      }).observe(el, { attributes: true, attributeFilter: ["data-rendered"] });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch);
  else watch();
})();
