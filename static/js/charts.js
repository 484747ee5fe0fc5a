// Renders every plotly figure embedded on the page as JSON (<div data-figure="script-id">),
// once plotly.js has arrived (plotly_loader.js fetches it after the page has loaded).
(function () {
  "use strict";
  function draw() {
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var source = document.getElementById(el.dataset.figure);
      if (!source) return;
      var fig = JSON.parse(source.textContent);
      if (typeof fig === "string") fig = JSON.parse(fig); // figure JSON embedded as a string
      window.Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false })
        .then(function () { el.dataset.rendered = "true"; });
    });
  }
  function render() {
    if (document.querySelector("[data-figure]")) window.whenPlotly(draw);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", render);
  else render();
})();
