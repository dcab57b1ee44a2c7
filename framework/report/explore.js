// tickemu report: the explore charts (framework/report/explore.go). Each
// .explore element holds its data as JSON; this draws a step chart of the
// samples per 1 us bucket (log scale) with a readout of the bucket under
// the pointer, and zooms on a dragged stretch or on the tail.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var W = 760, H = 240, L = 56, R = 12, T = 10, B = 34;

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  // quantile returns the smallest bucket at or above the q-quantile of
  // every series together.
  function quantile(series, q) {
    var best = Infinity;
    series.forEach(function (s) {
      var need = Math.ceil(q * s.n), acc = 0;
      for (var i = 0; i < s.buckets.length; i++) {
        acc += s.buckets[i][1];
        if (acc >= need) { best = Math.min(best, s.buckets[i][0]); break; }
      }
    });
    return best === Infinity ? 0 : best;
  }

  function setup(box) {
    var series = JSON.parse(document.getElementById(box.dataset.src).textContent);
    var lo = Infinity, hi = 0, top = 1;
    series.forEach(function (s) {
      s.buckets.forEach(function (b) { lo = Math.min(lo, b[0]); hi = Math.max(hi, b[0]); top = Math.max(top, b[1]); });
    });
    if (lo === Infinity) return;
    var full = [lo, hi + 1], view = full.slice();
    var controls = document.createElement("div");
    [["all", function () { return full; }],
     ["tail from p99", function () { return [quantile(series, 0.99), hi + 1]; }],
     ["tail from p99.9", function () { return [quantile(series, 0.999), hi + 1]; }]].forEach(function (b) {
      var btn = document.createElement("button");
      btn.type = "button";
      btn.textContent = b[0];
      btn.addEventListener("click", function () { view = b[1]().slice(); draw(); });
      controls.appendChild(btn);
    });
    box.appendChild(controls);
    var svg = el("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" }, box);
    var readout = document.createElement("div");
    readout.className = "readout";
    box.appendChild(readout);
    var ly = Math.log10(top * 2);
    function x(v) { return L + (v - view[0]) / Math.max(view[1] - view[0], 1) * (W - L - R); }
    function xinv(px) { return view[0] + (px - L) / (W - L - R) * Math.max(view[1] - view[0], 1); }
    function y(n) { return n <= 0 ? H - B : H - B - Math.log10(n + 1) / ly * (H - B - T); }

    function draw() {
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      var g = el("g", { "font-size": "11", "font-family": "system-ui, sans-serif", fill: "#444" }, svg);
      el("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#888" }, g);
      el("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#888" }, g);
      for (var e = 0; Math.pow(10, e) <= top * 2; e++) {
        var yy = y(Math.pow(10, e) - 1);
        el("line", { x1: L, y1: yy, x2: W - R, y2: yy, stroke: "#eee" }, g);
        el("text", { x: L - 4, y: yy + 4, "text-anchor": "end" }, g).textContent = String(Math.pow(10, e));
      }
      var span = view[1] - view[0], step = Math.pow(10, Math.floor(Math.log10(Math.max(span, 1) / 5)));
      if (span / step > 10) step *= 2;
      for (var t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
        el("text", { x: x(t), y: H - B + 14, "text-anchor": "middle" }, g).textContent = String(+t.toFixed(3));
      }
      el("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, g).textContent = "latency (us)";
      el("text", { x: 12, y: (T + H - B) / 2, transform: "rotate(-90 12 " + (T + H - B) / 2 + ")", "text-anchor": "middle" }, g).textContent = "samples";
      series.forEach(function (s, i) {
        // A step line: down to the axis across a gap, up to each bucket's
        // count, along it to the next microsecond.
        var d = "", end = null;
        s.buckets.forEach(function (b) {
          if (b[0] + 1 < view[0] || b[0] > view[1]) return;
          var x0 = Math.max(x(b[0]), L), x1 = Math.min(x(b[0] + 1), W - R);
          if (end === null) d = "M" + x0 + " " + (H - B);
          else if (end !== b[0]) d += " L" + x(end) + " " + (H - B) + " L" + x0 + " " + (H - B);
          d += " L" + x0 + " " + y(b[1]) + " L" + x1 + " " + y(b[1]);
          end = b[0] + 1;
        });
        if (d) {
          d += " L" + Math.min(x(end), W - R) + " " + (H - B);
          el("path", { d: d, fill: "none", stroke: s.color, "stroke-width": 1.5, "stroke-dasharray": i ? (2 * i) + " " + (2 * i) : "none" }, svg);
        }
      });
      cursor = el("line", { x1: -10, y1: T, x2: -10, y2: H - B, stroke: "#c00", "stroke-width": 1 }, svg);
      band = el("rect", { x: 0, y: T, width: 0, height: H - B - T, fill: "rgba(0,114,178,0.15)" }, svg);
    }
    var cursor, band, dragFrom = null;
    function px(ev) { var r = svg.getBoundingClientRect(); return (ev.clientX - r.left) * W / r.width; }
    svg.addEventListener("mousemove", function (ev) {
      var p = px(ev), us = Math.floor(xinv(p));
      cursor.setAttribute("x1", p); cursor.setAttribute("x2", p);
      if (dragFrom !== null) {
        band.setAttribute("x", Math.min(dragFrom, p));
        band.setAttribute("width", Math.abs(p - dragFrom));
      }
      var lines = series.map(function (s) {
        var n = 0, slower = 0;
        s.buckets.forEach(function (b) { if (b[0] === us) n = b[1]; if (b[0] > us) slower += b[1]; });
        return s.name + ": " + n + " samples at " + us + " us; " + slower + " slower (" + (100 * slower / Math.max(s.n, 1)).toPrecision(3) + "%)";
      });
      readout.textContent = lines.join("\n");
    });
    svg.addEventListener("mousedown", function (ev) { dragFrom = px(ev); ev.preventDefault(); });
    svg.addEventListener("mouseup", function (ev) {
      if (dragFrom === null) return;
      var a = xinv(Math.min(dragFrom, px(ev))), b = xinv(Math.max(dragFrom, px(ev)));
      dragFrom = null;
      if (b - a >= 1) view = [Math.floor(a), Math.ceil(b)];
      draw();
    });
    svg.addEventListener("dblclick", function () { view = full.slice(); draw(); });
    draw();
    box.dataset.ready = "1";
  }

  document.querySelectorAll(".explore").forEach(setup);
})();
