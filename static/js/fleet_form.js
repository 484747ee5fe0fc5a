// Fleet comparison form: show only the fields the chosen mode uses (a counter and its
// direction, a ratio, a fact, or a collective and metric), so the form says what it will do.
// Without JavaScript every field stays visible and the server ignores the unused ones.
(function () {
  "use strict";
  var FIELDS = {
    counter: ["counter", "direction"],
    ratio: ["ratio"],
    fact: ["fact", "direction"],
    pairwise: ["collective", "metric"],
  };
  var PER_MODE = ["counter", "direction", "ratio", "fact", "collective", "metric"];
  function apply(select) {
    var used = FIELDS[select.value] || FIELDS.counter;
    var form = select.form;
    PER_MODE.forEach(function (name) {
      var label = form.querySelector('label[data-field="' + name + '"]');
      if (label) label.hidden = used.indexOf(name) < 0;
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var select = document.querySelector('form.filters select[name="mode"]');
    if (!select) return;
    apply(select);
    select.addEventListener("change", function () { apply(select); });
  });
})();
