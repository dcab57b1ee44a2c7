package report

// pageHTML is the report's template: one page, its style inline, no script.
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
.plot svg { max-width: 100%; height: auto; }
.note { color: #666; font-size: 0.9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>Variants: {{range $i, $v := .Variants}}{{if $i}}, {{end}}<b>{{$v}}</b>{{if eq $i 0}}{{if gt (len $.Variants) 1}} (base){{end}}{{end}}{{end}}; seeds {{.Seeds}}; tickemu {{.Version}}.
Simulated time is deterministic: the same file and seeds give this page byte for byte.</p>
{{if .Failures}}<h2 id="failures">Failed runs</h2><ul>{{range .Failures}}<li>{{.}}</li>{{end}}</ul>{{end}}

<h2 id="config">Configuration</h2>
<details><summary>{{.File}}</summary>
<pre>{{.Source}}</pre>
</details>

{{range .Latency}}
<h2 id="latency">Latency: {{.Workload}}</h2>
<table>
<tr><th class="l">variant</th><th>samples</th><th>avg us</th><th>p50 us</th><th>p99 us</th><th>p99.9 us</th><th>max us</th></tr>
{{range .Rows}}<tr><td class="l">{{.Variant}}</td><td>{{.Samples}}</td><td>{{.Avg}}</td><td>{{.P50}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td>{{.Max}}</td></tr>
{{end}}</table>
<div class="plot">{{.Hist}}</div>
<div class="plot">{{.CDF}}</div>
{{end}}

<h2 id="compare">{{if .Single}}Results{{else}}Comparison with {{index .Variants 0}}{{end}}</h2>
<p class="note">Median over the seeds with its confidence interval (order statistics, as benchstat; "—": too few seeds for one);
{{if not .Single}}delta of the medians and the Mann-Whitney U test's p against the base, then the Wilcoxon signed-rank test over the seeds paired
("~": not significant at the chosen alpha). Green: better, red: worse, by the metric's direction.{{end}}</p>
<table>
<tr><th class="l">metric</th>{{range $i, $v := .Variants}}<th>{{$v}}</th><th>CI</th>{{if $i}}<th>vs base</th><th>p</th><th>paired</th>{{end}}{{end}}</tr>
{{range .Table}}<tr><td class="l">{{.Metric}}{{if .Better}} <span class="note">({{.Better}} is better)</span>{{end}}</td>
{{range .Cells}}<td>{{.Center}}</td><td class="note">{{.CI}}</td>{{if not .Base}}<td class="{{if .Significant}}{{if .Worse}}worse{{else}}better{{end}}{{end}}">{{.Delta}}</td><td>{{.P}}</td><td>{{.Paired}}</td>{{end}}{{end}}</tr>
{{end}}</table>

<h2 id="cpus">Counters per CPU</h2>
{{range .CPUs}}
<h3>{{.Variant}}, seed {{.Seed}}</h3>
<table>
<tr><th>CPU</th><th>timer irqs</th><th>hrtimer irqs</th><th>device writes</th><th>write us</th><th>ticks</th><th>tick stops</th><th>idle %</th><th>task %</th><th>irq %</th><th>softirq %</th></tr>
{{range .Rows}}{{$t := busy .}}<tr><td>{{.CPU}}</td><td>{{.LocalTimerIRQs}}</td><td>{{.HRTimerIRQs}}</td><td>{{.DeviceWrites}}</td><td>{{us .DeviceWriteCostNS}}</td><td>{{.Ticks}}</td><td>{{.TickStops}}</td><td>{{pct .IdleNS $t}}</td><td>{{pct .TaskNS $t}}</td><td>{{pct .IRQNS $t}}</td><td>{{pct .SoftirqNS $t}}</td></tr>
{{end}}</table>
{{if .Hidden}}<p class="note">{{.Hidden}} CPUs that stayed idle (at most one timer interrupt and device write, no task or softirq time) are not shown.</p>{{end}}
{{end}}

{{if .Worst}}<h2 id="worst">Worst cases</h2>
<p class="note">Each thread's Max, split into the parts the engine knows (they add up to the Max), for each variant's run with the largest Max.</p>
{{range .Worst}}
<h3>{{.Variant}}: {{.Workload}}, seed {{.Seed}}</h3>
<pre>{{range .Lines}}{{.}}
{{end}}</pre>
<div class="plot">{{.Plot}}</div>
{{end}}{{end}}

{{with .Timeline}}<h2 id="timeline">Timeline of the worst wakeup</h2>
<p>{{.Caption}}</p>
<div class="plot">{{.Plot}}</div>
{{end}}
</body>
</html>
`
