// Renders every plotly figure embedded on the page as JSON (<div data-figure="script-id">).
(function () {
  "use strict";
  function render() {
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var source = document.getElementById(el.dataset.figure);
      if (!source || !window.Plotly) return;
      var fig = JSON.parse(source.textContent);
      if (typeof fig === "string") fig = JSON.parse(fig); // figure JSON embedded as a string
      window.Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false })
        .then(function () { el.dataset.rendered = "true"; });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", render);
  else render();
})();
