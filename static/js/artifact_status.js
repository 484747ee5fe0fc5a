// Artifact page: while a parse is pending or running, poll the API and update the badge;
// reload once it lands so the derived tables appear. A file no parser took is read
// generically just after: the page also waits (30 s at most) for that reading to land.
(function () {
  "use strict";
  var box = document.getElementById("artifact-status");
  if (!box) return;
  var active = { pending: true, parsing: true };
  var awaiting = box.dataset.awaiting === "generic";
  var tries = 0;
  if (!active[box.dataset.status] && !awaiting) return;
  var badge = document.getElementById("status-badge");
  var progress = document.getElementById("status-progress");
  function poll() {
    fetch(box.dataset.api, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (a) {
        badge.textContent = a.status;
        badge.className = "status status-" + a.status;
        progress.textContent = a.progress_percent != null ? a.progress_percent + "% read" : "";
        var read = a.generic && Object.keys(a.generic).length > 0;
        if (active[a.status]) setTimeout(poll, 1000);
        else if (!awaiting || read) window.location.reload();
        else if (++tries < 30) setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  setTimeout(poll, 1000);
})();
