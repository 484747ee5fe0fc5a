// Report page: while a worker builds the report, poll the API and reload once it is done.
(function () {
  "use strict";
  var box = document.getElementById("report-status");
  if (!box) return;
  var active = { pending: true, building: true };
  if (!active[box.dataset.status]) return;
  var badge = document.getElementById("report-status-badge");
  function poll() {
    fetch(box.dataset.api, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (report) {
        if (badge) badge.textContent = report.status;
        if (active[report.status]) setTimeout(poll, 1500);
        else window.location.reload();
      })
      .catch(function () { setTimeout(poll, 4000); });
  }
  setTimeout(poll, 1500);
})();
