// The flame graph's interaction (embedded by embed-text): zoom, search,
// tooltips.  Everything shown is read from the document (titles and data
// attributes), never from this script, so no name from a capture is code.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var svg = document.documentElement;
  var pad = parseFloat(svg.getAttribute("data-pad"));
  var charPx = parseFloat(svg.getAttribute("data-char-px"));
  var width = parseFloat(svg.getAttribute("width"));
  var gw = width - 2 * pad;
  var layer = document.getElementById("frames");
  if (!layer || !layer.firstElementChild) return;

  // A frame's parts are read when it is first needed (hovered, or every
  // frame at the first zoom or search), not at load: a large graph opens
  // as fast as its markup is drawn.  Its group, geometry and the parts
  // of its title; the title gives way to an aria-label then, so that the
  // browser's own tooltip does not cover the one below.
  function frameOf(g) {
    if (g.jettFrame) return g.jettFrame;
    var rect = g.querySelector("rect");
    var title = g.querySelector("title");
    var t = title ? title.textContent : g.getAttribute("aria-label") || "";
    var cut = t.lastIndexOf(": ");
    var fr = {
      g: g, rect: rect, text: g.querySelector("text"),
      x: parseFloat(rect.getAttribute("x")), w: parseFloat(rect.getAttribute("width")),
      y: parseFloat(rect.getAttribute("y")),
      name: cut < 0 ? t : t.slice(0, cut), what: cut < 0 ? "" : t.slice(cut + 2)
    };
    fr.value = parseInt(fr.what, 10) || 0;
    fr.label0 = fr.text ? fr.text.textContent : "";
    if (title) {
      g.removeChild(title);
      g.setAttribute("aria-label", t);
    }
    if (!fr.text) {
      fr.text = document.createElementNS(NS, "text");
      fr.text.setAttribute("y", String(fr.y + 12));
      g.appendChild(fr.text);
    }
    g.jettFrame = fr;
    return fr;
  }

  var all = null;
  function frames() {
    if (!all) all = Array.prototype.map.call(layer.querySelectorAll("#frames > g.f"), frameOf);
    return all;
  }
  var root = frameOf(layer.firstElementChild);
  var total = root.value;

  // The end of a name survives a cut: "...main.to_json", not "jsonp.mai..".
  function label(name, w) {
    var chars = Math.floor((w - 6) / charPx);
    if (chars < 3) return "";
    var units = Array.from(name);
    if (units.length <= chars) return name;
    return "\u2026" + units.slice(units.length - (chars - 1)).join("");
  }

  function place(fr, x, w) {
    fr.rect.setAttribute("x", x.toFixed(2));
    fr.rect.setAttribute("width", w.toFixed(2));
    fr.text.setAttribute("x", (x + 3).toFixed(2));
    fr.text.textContent = label(fr.name, w);
  }

  function uiText(x, y, anchor, cls, content) {
    var t = document.createElementNS(NS, "text");
    t.setAttribute("x", String(x));
    t.setAttribute("y", String(y));
    t.setAttribute("text-anchor", anchor);
    t.setAttribute("class", cls);
    t.textContent = content;
    svg.appendChild(t);
    return t;
  }
  var searchBtn = uiText(width - pad, 22, "end", "ui", "Search");
  searchBtn.id = "search";
  var resetBtn = uiText(width - pad - 70, 22, "end", "ui", "Reset zoom");
  resetBtn.id = "reset";
  resetBtn.style.display = "none";
  var matched = uiText(width - pad, 42, "end", "h", "");
  matched.id = "matched";

  var eps = 0.011;
  var zoomed = null;

  function zoom(f) {
    if (f === root) return reset();
    zoomed = f;
    var scale = gw / f.w;
    frames().forEach(function (fr) {
      var inside = fr.x >= f.x - eps && fr.x + fr.w <= f.x + f.w + eps;
      var around = fr.x <= f.x + eps && fr.x + fr.w >= f.x + f.w - eps;
      if (fr.y < f.y && inside || fr === f) {
        fr.g.style.display = "";
        fr.g.classList.remove("anc");
        place(fr, pad + (fr.x - f.x) * scale, fr.w * scale);
      } else if (fr.y > f.y && around) {
        fr.g.style.display = "";
        fr.g.classList.add("anc");
        place(fr, pad, gw);
      } else {
        fr.g.style.display = "none";
      }
    });
    resetBtn.style.display = "";
  }

  function reset() {
    zoomed = null;
    if (!all) return void (resetBtn.style.display = "none"); // nothing was moved
    all.forEach(function (fr) {
      fr.g.style.display = "";
      fr.g.classList.remove("anc");
      place(fr, fr.x, fr.w);
      fr.text.textContent = fr.label0; // drawn by the exporter, wide characters counted
    });
    resetBtn.style.display = "none";
  }

  // Search: matching frames are highlighted, and the share of the root
  // they cover is shown; a match inside a matched frame counts once.
  function search(term) {
    var re;
    try {
      re = new RegExp(term);
    } catch (e) {
      clearSearch();
      matched.textContent = "not a regular expression";
      return;
    }
    var hits = frames().filter(function (fr) {
      var hit = fr !== root && re.test(fr.name);
      fr.g.classList.toggle("hit", hit);
      return hit;
    });
    hits.sort(function (a, b) { return b.y - a.y; });
    var counted = [];
    var sum = 0;
    hits.forEach(function (fr) {
      var covered = counted.some(function (c) {
        return c.y > fr.y && fr.x >= c.x - eps && fr.x + fr.w <= c.x + c.w + eps;
      });
      if (!covered) {
        counted.push(fr);
        sum += fr.value;
      }
    });
    matched.textContent = "Matched: " + (total ? (100 * sum / total).toFixed(2) : "0.00") +
      "% (" + hits.length + (hits.length === 1 ? " frame)" : " frames)");
  }

  function clearSearch() {
    if (all) all.forEach(function (fr) { fr.g.classList.remove("hit"); });
    matched.textContent = "";
  }

  function askSearch() {
    var term = window.prompt("Search frames (regular expression)", "");
    if (term === null) return;
    if (term === "") clearSearch(); else search(term);
  }

  // The tooltip: function, origin, path:line, value and share, and what
  // a differential graph adds (data-before, data-after, data-change).
  var tip = document.createElementNS(NS, "g");
  tip.setAttribute("class", "tip");
  tip.id = "tip";
  tip.style.display = "none";
  tip.style.pointerEvents = "none";
  var tipBox = document.createElementNS(NS, "rect");
  var tipText = document.createElementNS(NS, "text");
  tip.appendChild(tipBox);
  tip.appendChild(tipText);
  svg.appendChild(tip);

  function tipLines(fr) {
    var g = fr.g;
    var lines = [fr.name];
    var where = [g.getAttribute("data-o"), g.getAttribute("data-p")].filter(Boolean);
    if (g.classList.contains("m")) where = ["frames under a pixel wide, drawn as one"];
    if (where.length) lines.push(where.join("  "));
    lines.push(fr.what);
    ["before", "after", "change"].forEach(function (k) {
      var v = g.getAttribute("data-" + k);
      if (v) lines.push(k + ": " + v);
    });
    return lines;
  }

  function showTip(fr, ev) {
    var lines = tipLines(fr);
    while (tipText.firstChild) tipText.removeChild(tipText.firstChild);
    var longest = 0;
    lines.forEach(function (line, i) {
      var s = document.createElementNS(NS, "tspan");
      s.setAttribute("x", "0");
      s.setAttribute("dy", i ? "15" : "0");
      s.textContent = line;
      tipText.appendChild(s);
      longest = Math.max(longest, Array.from(line).length);
    });
    var w = longest * charPx + 12, h = lines.length * 15 + 8;
    tipBox.setAttribute("x", "-6");
    tipBox.setAttribute("y", "-15");
    tipBox.setAttribute("width", String(w));
    tipBox.setAttribute("height", String(h));
    var p = svg.createSVGPoint();
    p.x = ev.clientX;
    p.y = ev.clientY;
    var m = svg.getScreenCTM();
    if (m) p = p.matrixTransform(m.inverse());
    var x = Math.min(p.x + 14, width - w), y = p.y + 28;
    var height = parseFloat(svg.getAttribute("height"));
    if (y + h > height) y = Math.max(15, p.y - h);
    tip.setAttribute("transform", "translate(" + Math.max(6, x).toFixed(1) + "," + y.toFixed(1) + ")");
    tip.style.display = "";
  }

  function frameAt(ev) {
    var g = ev.target.closest ? ev.target.closest("#frames > g.f") : null;
    return g ? frameOf(g) : null;
  }

  layer.addEventListener("click", function (ev) {
    var fr = frameAt(ev);
    if (fr) zoom(fr);
  });
  // mouseover comes first as the pointer enters a frame: its title goes
  // before the browser would show it
  layer.addEventListener("mouseover", frameAt);
  layer.addEventListener("mousemove", function (ev) {
    var fr = frameAt(ev);
    if (fr) showTip(fr, ev); else tip.style.display = "none";
  });
  layer.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  resetBtn.addEventListener("click", reset);
  searchBtn.addEventListener("click", askSearch);
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") {
      reset();
      clearSearch();
    } else if (ev.key === "/" || (ev.key === "f" && (ev.ctrlKey || ev.metaKey))) {
      ev.preventDefault();
      askSearch();
    }
  });
})();
