// Report builder: "tick all" for the listed runs and a live count of ticked runs.
(function () {
  "use strict";
  var form = document.getElementById("runs-report");
  if (!form) return;
  var boxes = function () { return form.querySelectorAll('input[name="run"]'); };
  var count = document.getElementById("ticked-count");
  function update() {
    var n = 0;
    boxes().forEach(function (b) { if (b.checked) n += 1; });
    if (count) count.textContent = String(n);
  }
  var all = document.getElementById("tick-all");
  if (all) {
    all.addEventListener("change", function () {
      boxes().forEach(function (b) { b.checked = all.checked; });
      update();
    });
  }
  form.addEventListener("change", update);
  update();
  // Filtering reloads the list: carry the ticked runs along so they stay ticked.
  var filters = document.querySelector("form.filters");
  if (filters) {
    filters.addEventListener("submit", function () {
      filters.querySelectorAll('input[name="run"]').forEach(function (h) { h.remove(); });
      boxes().forEach(function (b) {
        if (!b.checked) return;
        var keep = document.createElement("input");
        keep.type = "hidden"; keep.name = "run"; keep.value = b.value;
        filters.appendChild(keep);
      });
    });
  }
})();
