// Drag-and-drop upload: one XHR per file to the REST API (session auth + CSRF), a progress
// bar per file while bytes go up, then the parse status polled until it settles.
(function () {
  "use strict";
  var zone = document.getElementById("dropzone");
  if (!zone) return;
  var api = zone.dataset.api;
  var list = document.getElementById("upload-list");
  var input = document.getElementById("upload-input");
  var csrf = zone.querySelector("input[name=csrfmiddlewaretoken]").value;
  var settled = { parsed: true, failed: true, stored: true };

  function field(id) { return document.getElementById(id).value.trim(); }

  function item(file) {
    var li = document.createElement("li");
    li.innerHTML = '<span class="name"></span> <progress max="100" value="0"></progress> ' +
      '<span class="state">uploading</span> <span class="detail"></span>';
    li.querySelector(".name").textContent = file.name;
    list.prepend(li);
    return li;
  }

  function show(li, state, detail, href) {
    var s = li.querySelector(".state");
    s.textContent = state;
    s.className = "state status status-" + state;
    var d = li.querySelector(".detail");
    d.textContent = detail || "";
    if (href) {
      var a = document.createElement("a");
      a.href = href; a.textContent = "open";
      d.append(" ", a);
    }
  }

  // What the row says beside its state: the kind detected (or chosen), the error, progress.
  function detail(a) {
    if (a.status === "failed") return a.error;
    if (a.status === "parsing") return a.progress_percent != null ? a.progress_percent + "%" : "";
    return a.kind_label ? "as " + a.kind_label : "";
  }

  // The page's counters (artifacts, runs, failed parses) read again once an upload settles.
  function refreshCounts() {
    var stats = document.querySelector(".stats");
    if (!stats) return;
    fetch(location.href, { credentials: "same-origin" })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").querySelector(".stats");
        if (fresh) stats.replaceWith(fresh);
      })
      .catch(function () { /* the counters stay as they were */ });
  }

  function poll(li, artifact) {
    fetch(artifact.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (a) {
        show(li, a.status, detail(a), a.page_url);
        if (!settled[a.status]) setTimeout(function () { poll(li, a); }, 1000);
        else refreshCounts();
      })
      .catch(function () { setTimeout(function () { poll(li, artifact); }, 3000); });
  }

  // A batch with a sweep name: once every file is stored, its artifacts become one sweep
  // (POST /api/v1/sweeps/); the runs join the sweep as they are parsed.
  function sweepBatch(name, count) {
    var ids = [], left = count;
    return function (id) {
      if (id) ids.push(id);
      left -= 1;
      if (left > 0) return;
      var out = document.getElementById("upload-sweep-result");
      if (!ids.length) { out.textContent = "No sweep made: no file was stored."; return; }
      fetch(zone.dataset.sweepsApi, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
        body: JSON.stringify({ name: name, artifact_ids: ids })
      }).then(function (r) { return r.json().then(function (b) { return [r.status, b]; }); })
        .then(function (res) {
          if (res[0] !== 201) { out.textContent = "No sweep made: " + JSON.stringify(res[1].detail || res[1]); return; }
          out.textContent = "Sweep made of " + ids.length + " file(s): ";
          var a = document.createElement("a");
          a.href = res[1].url; a.id = "upload-sweep-link"; a.textContent = res[1].name;
          out.append(a);
        });
    };
  }

  function upload(file, done) {
    var li = item(file);
    var bar = li.querySelector("progress");
    var form = new FormData();
    form.append("file", file);
    ["kind", "label", "host", "metadata"].forEach(function (name) {
      var v = field("upload-" + name);
      if (v) form.append(name, v);
    });
    var xhr = new XMLHttpRequest();
    xhr.open("POST", api);
    xhr.setRequestHeader("X-CSRFToken", csrf);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = function (e) { if (e.lengthComputable) bar.value = 100 * e.loaded / e.total; };
    xhr.onload = function () {
      var body = {};
      try { body = JSON.parse(xhr.responseText); } catch (e) { /* not JSON: keep the status text */ }
      bar.value = 100;
      if (done) done(xhr.status === 201 || xhr.status === 200 ? body.id : null);
      if (xhr.status === 201 || xhr.status === 200) {
        show(li, body.status, body.duplicate ? body.detail : detail(body), body.page_url);
        if (!settled[body.status]) poll(li, body);
        else refreshCounts();
      } else {
        var why = body.detail || (body.file && body.file.join(" ")) || (body.metadata && body.metadata.join(" ")) || xhr.statusText;
        show(li, "failed", "upload refused: " + why);
      }
    };
    xhr.onerror = function () {
      if (done) done(null);
      show(li, "failed", "network error: the upload did not reach the server");
    };
    xhr.send(form);
  }

  function files(list) {
    var name = field("upload-sweep");
    var done = name && list.length ? sweepBatch(name, list.length) : null;
    Array.prototype.forEach.call(list, function (file) { upload(file, done); });
  }
  input.addEventListener("change", function () { files(input.files); input.value = ""; });
  var folder = document.getElementById("upload-folder");
  folder.addEventListener("change", function () { files(folder.files); folder.value = ""; });
  zone.addEventListener("dragover", function (e) { e.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", function () { zone.classList.remove("over"); });
  zone.addEventListener("drop", function (e) {
    e.preventDefault();
    zone.classList.remove("over");
    files(e.dataTransfer.files);
  });
})();
