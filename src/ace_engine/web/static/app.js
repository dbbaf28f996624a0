/* ace-engine dashboard: small enhancements. Every page works without this file. */
(function () {
  "use strict";
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  var announce = function (text) {
    var live = document.getElementById("announce");
    if (live) { live.textContent = ""; window.setTimeout(function () { live.textContent = text; }, 50); }
  };
  var typing = function (el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  };

  /* -- command palette: Ctrl/Cmd-K ---------------------------------------------------------- */
  // The pages are the navigation's own links (the local dashboard's or the team server's), and
  // live results come only where the page names a search endpoint (`<meta name="search-url">`).
  var pages = Array.prototype.map.call(document.querySelectorAll("header nav a[data-key]"), function (a) {
    var label = a.cloneNode(true);
    Array.prototype.forEach.call(label.querySelectorAll(".count, .visually-hidden"), function (x) { x.remove(); });
    return [label.textContent.trim(), a.getAttribute("href")];
  });
  var searchUrl = (document.querySelector('meta[name="search-url"]') || {}).content || "";
  var quick = document.querySelector("form.quick");
  var fullSearch = quick ? quick.getAttribute("action") : "";
  var dialog, input, list, items = [], active = -1, timer = null, seq = 0;

  function option(title, meta, url) {
    var li = document.createElement("li");
    li.setAttribute("role", "option");
    li.id = "palette-opt-" + items.length;
    var t = document.createElement("span");
    t.textContent = title;
    li.appendChild(t);
    if (meta) { var m = document.createElement("span"); m.className = "meta"; m.textContent = meta; li.appendChild(m); }
    li.addEventListener("click", function () { window.location.href = url; });
    items.push({ el: li, url: url });
    list.appendChild(li);
  }
  function select(n) {
    if (!items.length) { active = -1; input.removeAttribute("aria-activedescendant"); return; }
    active = (n + items.length) % items.length;
    items.forEach(function (it, i) { it.el.setAttribute("aria-selected", i === active ? "true" : "false"); });
    input.setAttribute("aria-activedescendant", items[active].el.id);
    items[active].el.scrollIntoView({ block: "nearest" });
  }
  function fill(query, results) {
    list.textContent = "";
    items = [];
    var q = query.toLowerCase();
    pages.forEach(function (p) { if (!q || p[0].toLowerCase().indexOf(q) >= 0) { option("Go to " + p[0], "", p[1]); } });
    (results || []).forEach(function (r) {
      option(r.content, r.id + " · score " + r.score.toFixed(3) + " · " + r.why, r.url);
    });
    if (query && fullSearch) {
      option("Search for “" + query + "”", "full results page",
             fullSearch + (fullSearch.indexOf("?") >= 0 ? "&" : "?") + "q=" + encodeURIComponent(query));
    }
    select(results && results.length ? pages.filter(function (p) { return !q || p[0].toLowerCase().indexOf(q) >= 0; }).length : 0);
    announce(items.length + " results");
  }
  function search() {
    var query = input.value.trim(), mine = ++seq;
    if (!query || !searchUrl) { fill(query, []); return; }
    fetch(searchUrl + "?q=" + encodeURIComponent(query), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : { results: [] }; })
      .then(function (data) { if (mine === seq) { fill(query, data.results); } })
      .catch(function () { if (mine === seq) { fill(query, []); } });
  }
  function openPalette() {
    if (!dialog) {
      dialog = document.createElement("dialog");
      dialog.className = "palette";
      dialog.setAttribute("aria-label", "Command palette: search lessons or go to a page");
      input = document.createElement("input");
      input.type = "search";
      input.setAttribute("role", "combobox");
      input.setAttribute("aria-expanded", "true");
      input.setAttribute("aria-controls", "palette-list");
      input.setAttribute("aria-label", "Search lessons or pages");
      input.placeholder = "Search lessons, or type a page name…";
      list = document.createElement("ul");
      list.id = "palette-list";
      list.setAttribute("role", "listbox");
      dialog.appendChild(input);
      dialog.appendChild(list);
      document.body.appendChild(dialog);
      input.addEventListener("input", function () { window.clearTimeout(timer); timer = window.setTimeout(search, 150); });
      input.addEventListener("keydown", function (e) {
        if (e.key === "ArrowDown") { select(active + 1); e.preventDefault(); }
        else if (e.key === "ArrowUp") { select(active - 1); e.preventDefault(); }
        else if (e.key === "Enter" && active >= 0) { window.location.href = items[active].url; e.preventDefault(); }
      });
    }
    input.value = "";
    fill("", []);
    dialog.showModal();
    input.focus();
  }

  /* -- keys: Ctrl/Cmd-K, "/", "g" + letter, j / k ------------------------------------------- */
  var pendingG = false;
  document.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && (e.key === "k" || e.key === "K")) { e.preventDefault(); openPalette(); return; }
    if (e.ctrlKey || e.metaKey || e.altKey || typing(document.activeElement) || (dialog && dialog.open)) { return; }
    if (e.key === "/") { var q = document.getElementById("q") || document.getElementById("quick-q"); if (q) { e.preventDefault(); q.focus(); q.select(); } return; }
    if (pendingG) {
      pendingG = false;
      var link = document.querySelector('nav a[data-key="' + e.key + '"]');
      if (link) { window.location.href = link.getAttribute("href"); }
      return;
    }
    if (e.key === "g") { pendingG = true; window.setTimeout(function () { pendingG = false; }, 1200); return; }
    if (e.key === "j" || e.key === "k") {
      var nav = Array.prototype.slice.call(document.querySelectorAll("[data-nav-item]"));
      if (!nav.length) { return; }
      var at = nav.indexOf(document.activeElement);
      var next = e.key === "j" ? Math.min(nav.length - 1, at + 1) : Math.max(0, at < 0 ? 0 : at - 1);
      nav[next].focus();
      nav[next].scrollIntoView({ block: "nearest" });
    }
  });

  /* -- helpful / harmful marks without a reload ---------------------------------------------- */
  document.querySelectorAll('form[data-enhance="tag"]').forEach(function (form) {
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var body = new URLSearchParams(new FormData(form));
      fetch(form.action, { method: "POST", body: body, credentials: "same-origin",
                           headers: { Accept: "application/json", "X-CSRF-Token": csrf } })
        .then(function (r) { return r.json().then(function (d) { return { ok: r.ok, data: d }; }); })
        .then(function (res) {
          if (!res.ok) { announce(res.data.error || "Not saved."); return; }
          var d = res.data;
          var set = function (id, text) { var el = document.getElementById(id); if (el) { el.textContent = text; } };
          set("helpful-count", String(d.helpful + d.helpful_explicit));
          set("harmful-count", String(d.harmful + d.harmful_explicit));
          set("confidence", Number(d.confidence).toFixed(2));
          announce("Marked " + body.get("verdict") + ". Confidence " + Number(d.confidence).toFixed(2) + ".");
        })
        .catch(function () { form.submit(); });
    });
  });

  /* -- the live view of a running session (server-sent events) ------------------------------- */
  var live = document.querySelector("[data-live-src]");
  if (live && window.EventSource) {
    var story = document.getElementById(live.getAttribute("data-live-list"));
    var status = live.querySelector("[data-live-status]");
    var source = new EventSource(live.getAttribute("data-live-src"));
    source.addEventListener("items", function (e) {
      var data = JSON.parse(e.data);
      story.insertAdjacentHTML("beforeend", data.html);  /* rendered and escaped by the server */
      announce(data.count + " new event" + (data.count === 1 ? "" : "s"));
    });
    source.addEventListener("ended", function () {
      source.close();
      if (status) { status.textContent = "The session has ended."; }
      live.classList.remove("live");
    });
  }
})();
