// Artifact page: while a parse is pending or running, poll the API and update the badge;
// reload once it lands so the derived tables appear.
(function () {
  "use strict";
  var box = document.getElementById("artifact-status");
  if (!box) return;
  var active = { pending: true, parsing: true };
  if (!active[box.dataset.status]) return;
  var badge = document.getElementById("status-badge");
  var progress = document.getElementById("status-progress");
  function poll() {
    fetch(box.dataset.api, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (a) {
        badge.textContent = a.status;
        badge.className = "status status-" + a.status;
        progress.textContent = a.progress_percent != null ? a.progress_percent + "% read" : "";
        if (active[a.status]) setTimeout(poll, 1000);
        else window.location.reload();
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  setTimeout(poll, 1000);
})();
