// Post-mortem editor: live preview (server-side sanitized), autosave of the draft, embeds.
(function () {
  "use strict";
  var form = document.getElementById("postmortem-form");
  if (!form) return;
  var textarea = form.querySelector("textarea[name=body]");
  var revision = form.querySelector("input[name=revision]");
  var preview = document.getElementById("preview");
  var state = document.getElementById("autosave-state");
  var csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  var previewTimer = null;
  var lastSaved = textarea.value;
  var submitting = false;

  function post(url, payload) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      body: JSON.stringify(payload),
    }).then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      return response.json();
    });
  }

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
      window.Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false })
        .then(function () { el.dataset.rendered = "true"; });
    });
  }

  function refreshPreview() {
    post(form.dataset.previewUrl, { body: textarea.value })
      .then(function (data) {
        // The HTML comes from the server's sanitizer (perfhub.markdown) plus our own embeds.
        preview.innerHTML = data.html;
        preview.dataset.fresh = "true";
        drawCharts(preview);
      })
      .catch(function (err) { preview.dataset.fresh = "false"; state.textContent = "preview failed: " + err.message; });
  }

  function schedulePreview() {
    preview.dataset.fresh = "false";
    clearTimeout(previewTimer);
    previewTimer = setTimeout(refreshPreview, 300);
  }

  function autosave() {
    if (submitting || textarea.value === lastSaved) return;
    var body = textarea.value;
    post(form.dataset.autosaveUrl, { body: body, revision: parseInt(revision.value, 10) })
      .then(function (data) {
        lastSaved = body;
        var when = new Date(data.saved_at).toLocaleTimeString();
        state.textContent = "draft autosaved " + when +
          (data.stale ? " · revision " + data.current_revision + " was saved meanwhile: saving will show both versions" : "");
      })
      .catch(function (err) { state.textContent = "autosave failed: " + err.message; });
  }

  textarea.addEventListener("input", schedulePreview);
  form.addEventListener("submit", function () { submitting = true; });
  setInterval(autosave, 5000);
  window.addEventListener("beforeunload", autosave);

  var restore = document.getElementById("restore-draft");
  if (restore) {
    restore.addEventListener("click", function () {
      textarea.value = JSON.parse(document.getElementById("draft-body").textContent);
      document.getElementById("draft-banner").hidden = true;
      schedulePreview();
    });
  }
  if (document.readyState === "complete") refreshPreview();
  else window.addEventListener("load", refreshPreview);
})();
