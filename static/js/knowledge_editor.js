// Page editor: server-rendered preview (the same sanitizer as a save) and a warning before
// leaving with unsaved changes.
(function () {
  "use strict";
  function csrf(form) {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }
  function init() {
    var form = document.querySelector(".kb-form");
    if (!form) return;
    var body = form.querySelector("textarea[name=body]");
    var toggle = document.getElementById("kb-preview-toggle");
    var preview = document.getElementById("kb-preview");
    var dirty = false;
    form.addEventListener("input", function () { dirty = true; });
    form.addEventListener("submit", function () { dirty = false; });
    window.addEventListener("beforeunload", function (event) {
      if (dirty) { event.preventDefault(); event.returnValue = ""; }
    });
    if (!toggle || !body || !preview) return;
    toggle.addEventListener("click", function () {
      if (!preview.hidden) {
        preview.hidden = true; body.hidden = false; toggle.textContent = "Preview";
        return;
      }
      var data = new URLSearchParams();
      data.set("body", body.value);
      if (toggle.dataset.slug) data.set("slug", toggle.dataset.slug); // the page's pinned embeds
      fetch(toggle.dataset.url, {
        method: "POST", body: data, credentials: "same-origin",
        headers: { "X-CSRFToken": csrf(form) },
      }).then(function (r) { return r.json(); }).then(function (json) {
        preview.innerHTML = json.html; // sanitized by the server (perfhub.markdown)
        drawCharts(preview);
        preview.hidden = false; body.hidden = true; toggle.textContent = "Edit";
      });
    });
  }
  // Embedded charts ({{chart run=..}}) arrive as <div data-figure> + JSON, as on the page.
  function drawCharts(root) {
    if (!root.querySelector("[data-figure]")) return;
    window.whenPlotly(function () { drawNow(root); });
  }
  function drawNow(root) {
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      var source = document.getElementById(el.dataset.figure);
      if (!source) return;
      var fig = JSON.parse(source.textContent);
      if (typeof fig === "string") fig = JSON.parse(fig);
      window.Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
