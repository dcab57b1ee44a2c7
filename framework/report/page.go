package report

// pageHTML is the report's template: one page, its style and its one small
// script inline (exploreJS), nothing loaded from anywhere else.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 76em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
td.better { background: #e3f4e3; } td.worse { background: #fbe3e3; }
pre { background: #f7f7f7; padding: 0.7em; overflow-x: auto; font-size: 0.85em; }
details summary { cursor: pointer; }
/* Plots shrink with the window down to a width where their text is still
   read (480 px), and scroll sideways in their own box below it. */
.plot, .plots, .explore .chart { overflow-x: auto; }
.plot svg { max-width: 100%; min-width: 480px; height: auto; }
.plots { display: flex; flex-wrap: wrap; gap: 0.5em; } .plots svg { max-width: 49%; min-width: 480px; height: auto; }
.note { color: #666; font-size: 0.9em; }
.legend { font-size: 0.9em; margin: 0.5em 0 0; } .legend span { display: inline-block; margin-right: 1.2em; white-space: nowrap; }
.legend svg { vertical-align: middle; }
nav.toc { background: #f7f7f7; padding: 0.5em 1em; font-size: 0.9em; } nav.toc ul { margin: 0.2em 0; padding-left: 1.2em; }
details.unchanged { margin: 0.5em 0; }
.explore { margin: 0.5em 0 1.5em; position: relative; } .explore button { font: inherit; font-size: 0.85em; margin: 0 0.3em 0.2em 0; }
.explore svg { display: block; width: 100%; max-width: 760px; min-width: 480px; height: auto; border: 1px solid #ddd; margin-top: 0.3em; cursor: crosshair; }
.explore .tip { position: absolute; z-index: 1; background: #fff; border: 1px solid #888; box-shadow: 0 1px 4px rgba(0,0,0,.25); box-sizing: border-box;
  max-width: 100%; padding: 0.3em 0.5em; font-size: 0.8em; white-space: pre-wrap; font-family: ui-monospace, monospace; pointer-events: none; }
.ptip { position: absolute; z-index: 1; background: #fff; border: 1px solid #888; box-shadow: 0 1px 4px rgba(0,0,0,.25); max-width: 90vw;
  padding: 0.3em 0.5em; font-size: 0.8em; font-family: ui-monospace, monospace; white-space: pre-wrap; pointer-events: none; }
svg circle.pt { cursor: default; }
.scroll { overflow-x: auto; max-width: 100%; }
.incomplete { border: 2px solid #c60; background: #fff4e5; padding: 0.5em 0.8em; } .incomplete-tag { color: #c60; font-size: 0.7em; vertical-align: middle; border: 1px solid #c60; padding: 0 0.3em; }
</style>
</head>
<body>
<h1>{{.Title}}{{if .Incomplete}} <span class="incomplete-tag">INCOMPLETE</span>{{end}}</h1>
{{if .Incomplete}}<p class="incomplete" id="incomplete" role="note"><b>INCOMPLETE: interrupted.</b> {{.Incomplete}}</p>{{end}}
<p>Variants: {{range $i, $v := .Variants}}{{if $i}}, {{end}}<b>{{if $v}}{{$v}}{{else}}none (the file as written){{end}}</b>{{if eq $i 0}}{{if gt (len $.Variants) 1}} (base){{end}}{{end}}{{end}};
{{if .Sweeps}}sweeps {{range $i, $s := .Sweeps}}{{if $i}} × {{end}}<b>{{$s}}</b>{{end}} ({{.Points}} points); {{end}}seeds {{.Seeds}}; tickemu {{.Version}}.
Simulated time is deterministic: the same file and seeds give this page byte for byte.</p>
<nav class="toc" aria-label="Contents"><b>Contents</b><ul>
{{range .TOC}}<li><a href="#{{.ID}}">{{.Title}}</a>{{if .Sub}}<ul>{{range .Sub}}<li><a href="#{{.ID}}">{{.Title}}</a></li>{{end}}</ul>{{end}}</li>
{{end}}</ul></nav>
{{if .Failures}}<h2 id="failures">Failed runs</h2><ul>{{range .Failures}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Interrupted}}<h2 id="interrupted">Interrupted runs</h2>
<p class="note">Not failures: tickemu was interrupted (Ctrl-C, SIGTERM) before these runs finished. A run under way stopped after its current event with figures for the simulated time it reached; the others were not run.</p>
<ul>{{range .Interrupted}}<li>{{.Label}}: {{.What}}{{if .Metrics}}
<details><summary>partial figures</summary><div class="scroll"><table><tr><th class="l">metric</th><th>value</th></tr>
{{range .Metrics}}<tr><td class="l">{{.Metric}}</td><td>{{.Value}}</td></tr>
{{end}}</table></div></details>{{end}}</li>
{{end}}</ul>{{end}}

<h2 id="config">Configuration</h2>
<details><summary>{{.File}}</summary>
<pre>{{.Source}}</pre>
</details>

{{with .Sweep}}<h2 id="sweep">Metrics against {{.X}}</h2>
<p class="note">One line per {{if .ByVariant}}variant{{else}}series ({{range $i, $s := .Series}}{{if $i}}, {{end}}{{$s}}{{end}}){{end}} through the medians over the seeds; the whiskers reach the smallest and the largest seed's value.
The tables per sweep point below give the confidence intervals and the tests.</p>
{{template "legend" .Legend}}
<div class="plots">{{range .Plots}}{{.}}{{end}}</div>
{{if .Constant}}<p class="note">The same at every point, variant and seed:</p><ul class="note">{{range .Constant}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{end}}
{{range .Latency}}
<h2 id="{{.ID}}">Latency: {{.Workload}}</h2>
<div class="scroll"><table>
<tr><th class="l">{{if $.Sweeps}}series{{else}}variant{{end}}</th><th>samples</th><th>avg us</th><th>p50 us</th><th>p99 us</th><th>p99.9 us</th><th>max us</th></tr>
{{range .Rows}}<tr><td class="l">{{.Label}}</td><td>{{.Samples}}</td><td>{{.Avg}}</td><td>{{.P50}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td>{{.Max}}</td></tr>
{{end}}</table></div>
{{template "legend" .Legend}}
<div class="plot">{{.Hist}}</div>
<div class="plot">{{.CDF}}</div>
<div class="explore" data-src="{{.ID}}-data"><b>Explore</b> <span class="note">(hover for each 1 us bucket's samples; the dots are the table's p50, p99, p99.9 and Max; drag across the plot to zoom, pick a tail, pan with the arrows; double-click for everything)</span><br>
<script type="application/json" id="{{.ID}}-data">{{.Data}}</script></div>
{{end}}

<h2 id="compare">{{if .Single}}Results{{else if not .Sweeps}}Comparison with {{index .Variants 0}}{{else if eq (len .Variants) 1}}Results at each sweep point{{else}}Comparison with {{index .Variants 0}} at each sweep point{{end}}</h2>
<p class="note">Median over the seeds with its confidence interval (order statistics, as benchstat; "—": too few seeds for one);
{{if gt (len .Variants) 1}}delta of the medians and the Mann-Whitney U test's p against the base, then the Wilcoxon signed-rank test over the seeds paired
("~": not significant at the chosen alpha). Green: better, red: worse, by the metric's direction.{{end}}</p>
{{if .Sweeps}}{{range .PointTables}}<h3 id="{{.ID}}">{{.Point}}</h3>
{{template "table" (tableOf $.Variants .Rows)}}{{end}}{{else}}{{template "table" (tableOf .Variants .Table)}}{{end}}

<h2 id="cpus">Counters per CPU</h2>
{{if .Sweeps}}<p class="note">One table per variant and sweep point (its first seed's run); open one to see it.</p>{{end}}
{{range .CPUs}}
{{if $.Sweeps}}<details><summary>{{.Label}}, seed {{.Seed}}</summary>{{else}}<h3>{{.Label}}, seed {{.Seed}}</h3>{{end}}
<div class="scroll"><table>
<tr><th>CPU</th><th>timer irqs</th><th>hrtimer irqs</th><th>device writes</th><th>write us</th><th>ticks</th><th>tick stops</th><th>idle %</th><th>task %</th><th>irq %</th><th>softirq %</th></tr>
{{range .Rows}}{{$t := busy .}}<tr><td>{{.CPU}}</td><td>{{.LocalTimerIRQs}}</td><td>{{.HRTimerIRQs}}</td><td>{{.DeviceWrites}}</td><td>{{us .DeviceWriteCostNS}}</td><td>{{.Ticks}}</td><td>{{.TickStops}}</td><td>{{pct .IdleNS $t}}</td><td>{{pct .TaskNS $t}}</td><td>{{pct .IRQNS $t}}</td><td>{{pct .SoftirqNS $t}}</td></tr>
{{end}}</table></div>
{{if .Hidden}}<p class="note">{{.Hidden}} CPUs that stayed idle (at most one timer interrupt and device write, no task or softirq time) are not shown.</p>{{end}}
{{if $.Sweeps}}</details>{{end}}
{{end}}

{{if .Worst}}<h2 id="worst">Worst cases</h2>
<p class="note">Each thread's Max, split into the parts the engine knows (they add up to the Max), for each variant's run with the largest Max{{if .Sweeps}} at each sweep point{{end}}; every chart has the same scale.</p>
{{range .Worst}}
<h3>{{.Label}}: {{.Workload}}, seed {{.Seed}}</h3>
<pre>{{range .Lines}}{{.}}
{{end}}</pre>
<div class="plot">{{.Plot}}</div>
{{template "legend" .Legend}}
{{end}}{{end}}

{{with .Timeline}}<h2 id="timeline">Timeline of the worst wakeup</h2>
<p>{{.Caption}}</p>
<div class="plot">{{.Plot}}</div>
{{template "legend" .Legend}}
{{end}}
<script>{{.Script}}</script>
</body>
</html>
{{define "legend"}}{{if .}}<div class="legend" aria-label="Legend">{{range .}}<span>{{if .Box}}<svg width="14" height="10" aria-hidden="true"><rect width="14" height="10" fill="{{.Color}}"/></svg>{{else}}<svg width="32" height="10" aria-hidden="true"><line x1="0" y1="5" x2="32" y2="5" stroke="{{.Color}}" stroke-width="2" stroke-dasharray="{{.Dash}}"/>{{.Glyph}}</svg>{{end}} {{.Name}}</span>
{{end}}</div>{{end}}{{end}}
{{define "table"}}{{template "rows" (rowsOf .Variants .Changed)}}
{{if .Unchanged}}<details class="unchanged"><summary>{{len .Unchanged}} metrics the same in every variant (folded)</summary>
{{template "rows" (rowsOf .Variants .Unchanged)}}</details>{{end}}{{end}}
{{define "rows"}}{{if .Changed}}<div class="scroll"><table>
<tr><th class="l">metric</th>{{range $i, $v := .Variants}}<th>{{if $v}}{{$v}}{{else}}median{{end}}</th><th>CI</th>{{if $i}}<th>vs base</th><th>p</th><th>paired</th>{{end}}{{end}}</tr>
{{range .Changed}}<tr><td class="l">{{.Metric}}{{if .Better}} <span class="note">({{.Better}} is better)</span>{{end}}</td>
{{range .Cells}}<td>{{.Center}}</td><td class="note">{{.CI}}</td>{{if not .Base}}<td class="{{if .Significant}}{{if .Worse}}worse{{else}}better{{end}}{{end}}">{{.Delta}}</td><td>{{.P}}</td><td>{{.Paired}}</td>{{end}}{{end}}</tr>
{{end}}</table></div>{{end}}{{end}}
`
