// plotly.js is 4.7 MB of script: evaluating it takes most of a second on a small machine. It
// is fetched after the page's load event, so the text and tables show at once and the charts
// are drawn when it arrives. Scripts that draw call window.whenPlotly(fn); a page that draws
// nothing never fetches it.
(function () {
  "use strict";
  var src = document.currentScript.dataset.plotly;
  var waiting = [];
  var requested = false;

  function fetchPlotly() {
    if (requested) return;
    requested = true;
    var script = document.createElement("script");
    script.src = src;
    script.onload = function () {
      waiting.splice(0).forEach(function (fn) { fn(window.Plotly); });
    };
    document.head.appendChild(script);
  }

  window.whenPlotly = function (fn) {
    if (window.Plotly) { fn(window.Plotly); return; }
    waiting.push(fn);
    if (document.readyState === "complete") fetchPlotly();
    else window.addEventListener("load", function () { setTimeout(fetchPlotly, 0); }, { once: true });
  };
})();
