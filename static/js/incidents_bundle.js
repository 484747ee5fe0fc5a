// Bundle page: while the bundle is built by a worker, poll its API resource and show progress.
(function () {
  "use strict";
  var card = document.getElementById("bundle");
  if (!card || card.dataset.status === "ready" || card.dataset.status === "failed") return;
  function poll() {
    fetch(card.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (b) {
        document.getElementById("bundle-status").textContent = b.status;
        var bar = document.getElementById("bundle-progress");
        if (bar) bar.value = b.status === "ready" ? 100 : (b.progress_percent || 0);
        if (b.status === "ready" || b.status === "failed") window.location.reload();
        else setTimeout(poll, 1500);
      })
      .catch(function () { setTimeout(poll, 5000); });
  }
  setTimeout(poll, 1000);
})();
