// Trace list: the "group as job" form (POST, editors) sends the traces ticked in the table
// above it, which belongs to another (GET) form: one form cannot nest another.
(function () {
  "use strict";
  var form = document.getElementById("assign-job");
  if (!form) return;
  form.addEventListener("submit", function () {
    form.querySelectorAll("input[name=trace]").forEach(function (el) { el.remove(); });
    document.querySelectorAll("#trace-pick input[name=trace]:checked").forEach(function (box) {
      var copy = document.createElement("input");
      copy.type = "hidden";
      copy.name = "trace";
      copy.value = box.value;
      form.appendChild(copy);
    });
  });
})();
