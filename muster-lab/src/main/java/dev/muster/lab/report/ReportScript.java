package dev.muster.lab.report;

/**
 * The page's own script: draws the charts with Chart.js from the JSON in {@code <script id="muster-data">}. One
 * chart per canvas the page holds ({@code calls-ID}, {@code windows-ID}, {@code persecond-ID}, {@code timeline-ID});
 * animation is off so
 * a headless screenshot or a print shows the final chart.
 */
final class ReportScript {
  private ReportScript() {}

  static final String JS = """
      (() => {
        Chart.defaults.animation = false;
        Chart.defaults.maintainAspectRatio = false;
        const data = JSON.parse(document.getElementById('muster-data').textContent);
        const KIND_COLORS = {
          'fault (removal − window)': '#000000', 'removed': '#d32f2f', 'added': '#2e7d32',
          'lease_lost': '#f57c00', 'reregistered': '#7b1fa2', 'revoked': '#c2185b', 'draining': '#f06292',
          'stale': '#fbc02d', 'recovered': '#0288d1', 'resync': '#5d4037', 'unreachable': '#ff7043',
          'reconnected': '#00897b', 'registered': '#9e9e9e', 'snapshot': '#607d8b', 'update': '#90a4ae',
          'call failed': '#e53935', '@WARM@': '#757575', 'probe_down': '#b71c1c', 'probe_up': '#1b5e20',
          'panic_on': '#6a1b9a', 'panic_off': '#ab47bc', 'slow_start_done': '#00838f', 'max_stale_reached': '#e65100',
          'max_stale_cleared': '#0277bd', 'ready': '#2e7d32', 'fault': '#000000', 'heal': '#455a64'
        };
        const PALETTE = ['#3949ab', '#00acc1', '#7cb342', '#8e24aa', '#6d4c41', '#f4511e'];
        let spare = 0;
        const color = kind => KIND_COLORS[kind] || (KIND_COLORS[kind] = PALETTE[spare++ % PALETTE.length]);
        const isFault = kind => kind.startsWith('fault');
        const byKind = items => items.reduce((m, it) => { (m[it.kind] = m[it.kind] || []).push(it); return m; }, {});
        const pointTooltip = {callbacks: {label: c => c.raw && c.raw.label
            ? c.raw.label + ' (' + c.raw.x.toFixed(3) + ' s)' : undefined}};
        const legend = {position: 'bottom', labels: {boxWidth: 14, sort: (a, b) => a.datasetIndex - b.datasetIndex}};
        const seconds = s => s.originIsFirstCall ? 'seconds since the first call' : 'seconds since the first event';
        // The calls chart and the timeline share one x range and one y-axis width, so they line up vertically.
        const xRange = s => {
          const xs = s.events.map(e => e.x).concat(s.calls ? [s.calls.seconds] : []);
          return {min: Math.floor(Math.min(0, ...xs)), max: Math.ceil(Math.max(...xs))};
        };
        const fixedWidth = scale => { scale.width = 96; };

        function callsChart(canvas, s) {
          const shades = [['#a5d6a7', '#ef5350'], ['#2e7d32', '#8e0000'], ['#66bb6a', '#ff8a80']];
          const bars = s.calls.consumers.flatMap((k, i) => {
            const [ok, failed] = shades[i % shades.length];
            const series = values => values.map((y, t) => ({x: t + 0.5, y}));
            return [{type: 'bar', label: k.name + ' ok', stack: k.name, backgroundColor: ok, data: series(k.ok)},
                {type: 'bar', label: k.name + ' failed', stack: k.name, backgroundColor: failed, data: series(k.failed)}];
          });
          const marks = Object.entries(byKind(s.markers)).map(([kind, ms]) => ({
            type: 'line', label: kind, yAxisID: 'marks', order: -1, borderColor: color(kind), backgroundColor: color(kind),
            borderWidth: isFault(kind) ? 2 : 1.5, borderDash: isFault(kind) ? [] : [5, 3], spanGaps: false,
            pointRadius: ms.flatMap(() => [0, 4, 0]), pointStyle: isFault(kind) ? 'rectRot' : 'circle',
            data: ms.flatMap(m => [{x: m.x, y: 0, label: m.label}, {x: m.x, y: 1, label: m.label}, {x: m.x, y: null}])
          }));
          new Chart(canvas, {type: 'bar', data: {datasets: bars.concat(marks)}, options: {
            animation: false,
            scales: {
              x: {type: 'linear', stacked: true, offset: false, ...xRange(s), ticks: {stepSize: 1},
                  title: {display: true, text: seconds(s)}},
              y: {stacked: true, beginAtZero: true, afterFit: fixedWidth,
                  title: {display: true, text: 'calls started in that second'}},
              marks: {axis: 'y', type: 'linear', display: false, min: 0, max: 1.04, stacked: false}
            },
            plugins: {legend, tooltip: pointTooltip}
          }});
        }

        const valueLabels = {id: 'valueLabels', afterDatasetsDraw(chart) {
          const ctx = chart.ctx;
          chart.data.datasets.forEach((d, i) => chart.getDatasetMeta(i).data.forEach((bar, j) => {
            ctx.save();
            ctx.fillStyle = '#222';
            ctx.font = '12px sans-serif';
            ctx.textBaseline = 'middle';
            ctx.fillText(d.data[j] + ' ms', bar.x + 6, bar.y);
            ctx.restore();
          }));
        }};

        function windowsChart(canvas, s) {
          new Chart(canvas, {type: 'bar', plugins: [valueLabels], data: {
            labels: s.windows.map(w => w.label),
            datasets: s.windows.every(w => w.remainder !== undefined) ? [
              {label: 'lease remainder (fault → last renewal + TTL)', backgroundColor: '#ffcc80',
                borderColor: '#ef6c00', borderWidth: 1, data: s.windows.map(w => w.remainder)},
              {label: 'expiry detection + delivery (→ watcher drops the provider)', backgroundColor: '#ef5350',
                borderColor: '#b71c1c', borderWidth: 1, data: s.windows.map(w => w.detection)}
            ] : [{label: 'fault → watcher drops the provider (whole window, not split)',
                backgroundColor: '#ffab91', borderColor: '#e64a19', borderWidth: 1, data: s.windows.map(w => w.ms)}]
          }, options: {
            animation: false, indexAxis: 'y',
            scales: {x: {beginAtZero: true, stacked: true, grace: '12%', title: {display: true, text: 'ms'}},
                     y: {stacked: true}},
            plugins: {legend}
          }});
        }

        function perSecondChart(canvas, s) {
          const lineColors = ['#c62828', '#1565c0', '#2e7d32', '#6a1b9a', '#ef6c00'];
          const datasets = s.perSecond.lines.map((l, i) => ({
            type: 'line', label: l.label, borderColor: lineColors[i % lineColors.length],
            backgroundColor: lineColors[i % lineColors.length], borderWidth: 2, pointRadius: 3, spanGaps: false,
            data: l.values.map((y, t) => ({x: t + 0.5, y}))
          }));
          new Chart(canvas, {type: 'line', data: {datasets}, options: {
            animation: false,
            scales: {x: {type: 'linear', min: 0, ticks: {stepSize: 1},
                         title: {display: true, text: 'seconds since ' + s.perSecond.x}},
                     y: {beginAtZero: true, title: {display: true, text: s.perSecond.y}}},
            plugins: {legend}
          }});
        }

        function timelineChart(canvas, s) {
          const datasets = Object.entries(byKind(s.events)).map(([kind, es]) => ({
            label: kind, backgroundColor: color(kind), borderColor: color(kind),
            pointRadius: kind === 'call failed' ? 3 : 6, pointStyle: isFault(kind) ? 'rectRot' : 'circle',
            data: es.map(e => ({x: e.x, y: e.process, label: e.process + ': ' + e.label}))
          }));
          new Chart(canvas, {type: 'scatter', data: {datasets}, options: {
            animation: false,
            scales: {x: {type: 'linear', ...xRange(s), ticks: {stepSize: 1}, title: {display: true, text: seconds(s)}},
                     y: {type: 'category', labels: s.processes, offset: true, afterFit: fixedWidth}},
            plugins: {legend, tooltip: pointTooltip}
          }});
        }

        for (const s of data.scenarios) {
          const draw = (prefix, fn) => {
            const canvas = document.getElementById(prefix + '-' + s.id);
            if (canvas) fn(canvas, s);
          };
          draw('calls', callsChart);
          draw('windows', windowsChart);
          draw('persecond', perSecondChart);
          draw('timeline', timelineChart);
        }
      })();
      """.replace("@WARM@", ScenarioCharts.WARM);
}
