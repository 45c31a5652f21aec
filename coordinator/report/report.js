// Draws the report's figures (docs/report.md) from the JSON in #jf-data with the embedded
// Chart.js. Each figure's section gets data-state ("chart", "table", "no-data" or "error") and
// data-points (the values drawn), which integration.report reads back from the rendered page.
"use strict";
(function () {
  var errors = 0;
  window.addEventListener("error", function () {
    errors++;
    document.body.setAttribute("data-errors", String(errors));
  });
  var data = JSON.parse(document.getElementById("jf-data").textContent);
  var colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  function countPoints(fig) {
    if (fig.kind === "table") { return fig.rows.length; }
    var n = 0;
    fig.datasets.forEach(function (ds) {
      ds.data.forEach(function (v) { if (v !== null) { n++; } });
    });
    return n;
  }

  function axis(title, position) {
    return { type: "linear", position: position, title: { display: true, text: title } };
  }

  function chartConfig(fig) {
    var simText = fig.simulated ? "SIMULATED DATA (simulated boards)" : "";
    var hasY2 = fig.datasets.some(function (ds) { return ds.axis === "y2"; });
    var scales = { y: axis(fig.y_label, "left") };
    scales.x = fig.kind === "bar"
      ? { type: "category", title: { display: true, text: fig.x_label } }
      : axis(fig.x_label, "bottom");
    if (hasY2) {
      scales.y2 = axis(fig.y2_label, "right");
      scales.y2.grid = { drawOnChartArea: false };
    }
    var datasets = fig.datasets.map(function (ds, i) {
      var c = colours[i % colours.length];
      var d = { label: ds.label, data: ds.data, yAxisID: ds.axis, borderColor: c,
                backgroundColor: c };
      if (ds.axis === "y2") { d.borderDash = [6, 4]; }
      if (fig.kind === "scatter" && i > 0) { d.showLine = true; d.pointRadius = 5; }
      return d;
    });
    return {
      type: fig.kind,
      data: { labels: fig.labels, datasets: datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: scales,
        plugins: {
          title: { display: true, text: fig.title },
          subtitle: { display: fig.simulated, text: simText, color: "#c62828",
                      font: { weight: "bold" } }
        }
      }
    };
  }

  function drawTable(fig, box) {
    var t = el("table", "jf-table");
    var head = el("tr");
    fig.columns.forEach(function (c) { head.appendChild(el("th", null, c)); });
    t.appendChild(head);
    fig.rows.forEach(function (r) {
      var tr = el("tr");
      r.forEach(function (v) {
        tr.appendChild(el("td", null, v === null ? "" : (typeof v === "number" &&
                          !Number.isInteger(v) ? v.toFixed(2) : String(v))));
      });
      t.appendChild(tr);
    });
    box.appendChild(t);
  }

  function drawFigure(fig) {
    var sec = el("section", "jf-fig");
    sec.id = "fig-" + fig.id;
    var h = el("h2", null, fig.title);
    if (fig.simulated) { h.appendChild(el("span", "jf-sim", "SIMULATED")); }
    sec.appendChild(h);
    if (fig.note) { sec.appendChild(el("p", "jf-note", fig.note)); }
    document.getElementById("jf-figures").appendChild(sec);
    var points = countPoints(fig);
    sec.setAttribute("data-points", String(points));
    if (fig.no_data || points === 0) {
      sec.appendChild(el("p", "jf-nodata", "no data: " + (fig.no_data || "nothing to draw")));
      sec.setAttribute("data-state", "no-data");
      return;
    }
    if (fig.kind === "table") {
      drawTable(fig, sec);
      sec.setAttribute("data-state", "table");
      return;
    }
    var box = el("div", "jf-canvas");
    var canvas = el("canvas");
    box.appendChild(canvas);
    sec.appendChild(box);
    try {
      new Chart(canvas, chartConfig(fig));
      sec.setAttribute("data-state", "chart");
    } catch (e) {
      sec.setAttribute("data-state", "error");
      throw e;
    }
  }

  document.title = "jetfleet report: " + data.sweep;
  var head = document.getElementById("jf-head");
  head.appendChild(el("h1", null, "jetfleet report: sweep " + data.sweep));
  head.appendChild(el("p", "jf-summary", "Valid runs only (jetfleet check): " +
                      data.valid_runs.summary + "."));
  data.figures.forEach(drawFigure);
  document.body.setAttribute("data-figures", String(data.figures.length));
  document.body.setAttribute("data-errors", String(errors));
})();
