// tickemu report: the explore charts (framework/report/explore.go). Each
// .explore element holds its data as JSON; this draws a step chart of the
// samples per 1 us bucket (log scale) with each series' p50, p99, p99.9 and
// Max marked (the latency table's numbers, computed here from the same
// histograms), a tooltip with the bucket under the pointer (or the marker
// near it), zoom on a dragged stretch or on the tail, and pan; and a
// tooltip on each point of the sweep plots.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var W = 760, H = 240, L = 56, R = 12, T = 10, B = 34;
  var SNAP = 8; // px (chart units) within which the pointer takes a marker
  var QS = [["p50", 0.5], ["p99", 0.99], ["p99.9", 0.999]];

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  // pct is the q-quantile of series s in whole us, as the table's (Go's
  // pct): the first bucket whose cumulative count reaches ceil(q n), or
  // the Max when it falls among the samples past the histogram.
  function pct(s, q) {
    var need = Math.ceil(q * s.n), acc = 0;
    for (var i = 0; i < s.buckets.length; i++) {
      acc += s.buckets[i][1];
      if (acc >= need) return s.buckets[i][0];
    }
    return s.max;
  }

  function count(s, us) {
    for (var i = 0; i < s.buckets.length; i++) if (s.buckets[i][0] === us) return s.buckets[i][1];
    return 0;
  }

  function button(label, title, parent, fn) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.title = title;
    b.setAttribute("aria-label", title);
    b.addEventListener("click", fn);
    parent.appendChild(b);
    return b;
  }

  function setup(box) {
    var series = JSON.parse(document.getElementById(box.dataset.src).textContent);
    var lo = Infinity, hi = 0, top = 1;
    series.forEach(function (s) {
      s.buckets.forEach(function (b) { lo = Math.min(lo, b[0]); hi = Math.max(hi, b[0]); top = Math.max(top, b[1]); });
      if (s.n > 0) hi = Math.max(hi, s.max);
      s.marks = [];
      if (s.n === 0) return;
      QS.concat([["Max", 1]]).forEach(function (q) {
        var us = q[1] === 1 ? s.max : pct(s, q[1]);
        var m = s.marks.length && s.marks[s.marks.length - 1];
        if (m && m.us === us) m.qs.push(q[0]);
        else s.marks.push({ us: us, qs: [q[0]] });
      });
    });
    if (lo === Infinity) return;
    // Every bucket, with one empty microsecond on either side so that the
    // first and the last are not on the frame.
    var full = [Math.max(lo - 1, 0), hi + 2], view = full.slice();
    var controls = document.createElement("div");
    controls.className = "controls";
    function tail(q) {
      return function () {
        var from = Infinity;
        series.forEach(function (s) { if (s.n) from = Math.min(from, pct(s, q)); });
        setView([from, full[1]]);
      };
    }
    button("all", "show every bucket (reset the zoom)", controls, function () { setView(full); });
    button("tail from p99", "zoom on the buckets from the smallest p99 on", controls, tail(0.99));
    button("tail from p99.9", "zoom on the buckets from the smallest p99.9 on", controls, tail(0.999));
    button("\u25c0", "pan left", controls, function () { pan(-0.5); });
    button("\u25b6", "pan right", controls, function () { pan(0.5); });
    var shown = document.createElement("span");
    shown.className = "note view";
    controls.appendChild(shown);
    box.appendChild(controls);
    var chart = document.createElement("div");
    chart.className = "chart";
    box.appendChild(chart);
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", tabindex: "0",
      "aria-label": "samples per 1 us bucket against latency; arrow keys pan, Escape resets" }, chart);
    var tip = document.createElement("div");
    tip.className = "tip";
    tip.hidden = true;
    box.appendChild(tip);
    var ly = Math.log10(top * 2);
    function x(v) { return L + (v - view[0]) / Math.max(view[1] - view[0], 1) * (W - L - R); }
    function xinv(px) { return view[0] + (px - L) / (W - L - R) * Math.max(view[1] - view[0], 1); }
    function y(n) { return n <= 0 ? H - B : H - B - Math.log10(n + 1) / ly * (H - B - T); }
    function setView(v) {
      view = [Math.max(full[0], Math.floor(v[0])), Math.min(full[1], Math.ceil(v[1]))];
      if (view[1] - view[0] < 1) view = full.slice();
      draw();
    }
    // pan moves the view by a fraction of its width, within the data.
    function pan(f) {
      var w = view[1] - view[0], d = Math.round(w * f);
      var a = Math.min(Math.max(view[0] + d, full[0]), full[1] - w);
      view = [a, a + w];
      draw();
    }

    var cursor, band, dragFrom = null, markers = [];
    function draw() {
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      markers = [];
      shown.textContent = view[0] === full[0] && view[1] === full[1] ? "showing every bucket" :
        "showing " + view[0] + " to " + view[1] + " us of " + full[0] + " to " + full[1];
      box.dataset.view = view[0] + "," + view[1];
      var g = el("g", { "font-size": "12", "font-family": "system-ui, sans-serif", fill: "#444" }, svg);
      el("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#888" }, g);
      el("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#888" }, g);
      for (var e = 0; Math.pow(10, e) <= top * 2; e++) {
        var yy = y(Math.pow(10, e) - 1);
        el("line", { x1: L, y1: yy, x2: W - R, y2: yy, stroke: "#eee" }, g);
        el("text", { x: L - 4, y: yy + 4, "text-anchor": "end" }, g).textContent = String(Math.pow(10, e));
      }
      var span = view[1] - view[0], step = Math.max(1, Math.pow(10, Math.floor(Math.log10(Math.max(span, 1) / 5))));
      if (span / step > 10) step *= 2;
      for (var t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
        el("text", { "class": "xtick", x: x(t), y: H - B + 14, "text-anchor": "middle" }, g).textContent = String(t);
      }
      el("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, g).textContent = "latency (us)";
      el("text", { x: 12, y: (T + H - B) / 2, transform: "rotate(-90 12 " + (T + H - B) / 2 + ")", "text-anchor": "middle" }, g).textContent = "samples";
      var plot = el("g", {}, svg);
      series.forEach(function (s, i) {
        // A step line: down to the axis across a gap, up to each bucket's
        // count, along it to the next microsecond.
        var d = "", end = null;
        s.buckets.forEach(function (b) {
          if (b[0] + 1 < view[0] || b[0] > view[1]) return;
          var x0 = Math.max(x(b[0]), L), x1 = Math.min(x(b[0] + 1), W - R); // inside the frame
          if (end === null) d = "M" + x0 + " " + (H - B);
          else if (end !== b[0]) d += " L" + x(end) + " " + (H - B) + " L" + x0 + " " + (H - B);
          d += " L" + x0 + " " + y(b[1]) + " L" + x1 + " " + y(b[1]);
          end = b[0] + 1;
        });
        if (d) {
          d += " L" + Math.min(x(end), W - R) + " " + (H - B);
          el("path", { d: d, fill: "none", stroke: s.color, "stroke-width": 1.5, "stroke-dasharray": i ? (2 * i) + " " + (2 * i) : "none" }, plot);
        }
      });
      // The markers, on the middle of their bucket's step, the base
      // series' on top.
      for (var i = series.length - 1; i >= 0; i--) {
        var s = series[i];
        s.marks.forEach(function (m) {
          if (m.us < view[0] || m.us >= view[1]) return;
          var c = el("circle", { cx: x(m.us + 0.5), cy: y(count(s, m.us)), r: 3.5, fill: s.color, stroke: "#fff", "stroke-width": 1,
            "class": "mark", "data-series": s.name, "data-q": m.qs.join(" "), "data-us": m.us }, plot);
          markers.push({ cx: +c.getAttribute("cx"), cy: +c.getAttribute("cy"), us: m.us });
        });
      }
      cursor = el("line", { x1: -10, y1: T, x2: -10, y2: H - B, stroke: "#c00", "stroke-width": 1 }, svg);
      band = el("rect", { x: 0, y: T, width: 0, height: H - B - T, fill: "rgba(0,114,178,0.15)" }, svg);
    }
    // pos is the pointer in chart units.
    function pos(ev) {
      var r = svg.getBoundingClientRect();
      return { x: (ev.clientX - r.left) * W / r.width, y: (ev.clientY - r.top) * H / r.height };
    }
    // describe says what each series has in bucket us: its samples there,
    // the table's quantiles that fall there, and how many are slower.
    function describe(us) {
      var lines = [us + " us"];
      series.forEach(function (s) {
        var slower = 0;
        s.buckets.forEach(function (b) { if (b[0] > us) slower += b[1]; });
        if (s.max > us) slower += s.over; // past the histogram, at most the Max
        var qs = [];
        s.marks.forEach(function (m) { if (m.us === us) qs = qs.concat(m.qs); });
        lines.push(s.name + ": " + count(s, us) + " samples" + (qs.length ? ", " + qs.join(" ") + " here" : "") +
          "; " + slower + " slower (" + (100 * slower / Math.max(s.n, 1)).toPrecision(3) + "%)");
      });
      return lines.join("\n");
    }
    function hover(ev) {
      var p = pos(ev), us = Math.floor(xinv(p.x)), best = SNAP * SNAP;
      markers.forEach(function (m) {
        var d = (m.cx - p.x) * (m.cx - p.x) + (m.cy - p.y) * (m.cy - p.y);
        if (d <= best) { best = d; us = m.us; }
      });
      if (dragFrom !== null) {
        band.setAttribute("x", Math.min(dragFrom, p.x));
        band.setAttribute("width", Math.abs(p.x - dragFrom));
      }
      if (p.x < L || p.x > W - R || us < view[0] || us >= view[1]) { hide(); return; }
      cursor.setAttribute("x1", x(us + 0.5));
      cursor.setAttribute("x2", x(us + 0.5));
      tip.textContent = describe(us);
      tip.hidden = false;
      // Beside the pointer, inside the box; in a narrow window, where it
      // would cover most of the chart, under the chart.
      var b = box.getBoundingClientRect();
      var left = ev.clientX - b.left + 14, topPx = ev.clientY - b.top + 14;
      if (left + tip.offsetWidth > b.width) left = ev.clientX - b.left - 14 - tip.offsetWidth;
      left = Math.max(0, Math.min(left, b.width - tip.offsetWidth));
      if (b.width < 2 * tip.offsetWidth) {
        left = 0;
        topPx = chart.getBoundingClientRect().bottom - b.top + 4;
      }
      tip.style.left = left + "px";
      tip.style.top = topPx + "px";
    }
    function hide() {
      tip.hidden = true;
      cursor.setAttribute("x1", -10);
      cursor.setAttribute("x2", -10);
    }
    svg.addEventListener("mousemove", hover);
    svg.addEventListener("mouseleave", function () { hide(); dragFrom = null; band.setAttribute("width", 0); });
    svg.addEventListener("mousedown", function (ev) { dragFrom = pos(ev).x; ev.preventDefault(); });
    svg.addEventListener("mouseup", function (ev) {
      if (dragFrom === null) return;
      var a = xinv(Math.min(dragFrom, pos(ev).x)), b = xinv(Math.max(dragFrom, pos(ev).x));
      dragFrom = null;
      band.setAttribute("width", 0);
      if (b - a >= 1) setView([a, b]);
    });
    svg.addEventListener("dblclick", function () { setView(full); });
    svg.addEventListener("keydown", function (ev) {
      if (ev.key === "ArrowLeft") pan(-0.5);
      else if (ev.key === "ArrowRight") pan(0.5);
      else if (ev.key === "Escape") setView(full);
      else return;
      ev.preventDefault();
    });
    draw();
    box.dataset.ready = "1";
  }

  document.querySelectorAll(".explore").forEach(setup);

  // The sweep plots' points (svgOf's circles over them): their median and
  // the seeds' spread in a tooltip beside the pointer.
  var ptip = document.createElement("div");
  ptip.className = "ptip";
  ptip.hidden = true;
  document.body.appendChild(ptip);
  document.querySelectorAll("svg circle.pt").forEach(function (c) {
    c.addEventListener("mouseenter", function (ev) {
      // Every line's point under the pointer: where lines come close their
      // points' circles overlap, and the one on top is not the only one.
      var svg = c.ownerSVGElement, here = [];
      var p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(svg.getScreenCTM().inverse());
      svg.querySelectorAll("circle.pt").forEach(function (o) {
        var dx = o.cx.baseVal.value - p.x, dy = o.cy.baseVal.value - p.y, r = o.r.baseVal.value;
        if (dx * dx + dy * dy <= r * r) here.push(o.dataset.tip);
      });
      if (!here.length) here.push(c.dataset.tip);
      ptip.textContent = here.join("\n");
      ptip.hidden = false;
      var left = ev.pageX + 14;
      if (left + ptip.offsetWidth > document.documentElement.clientWidth + scrollX) left = Math.max(scrollX, ev.pageX - 14 - ptip.offsetWidth);
      ptip.style.left = left + "px";
      ptip.style.top = ev.pageY + 14 + "px";
    });
    c.addEventListener("mouseleave", function () { ptip.hidden = true; });
  });
})();
