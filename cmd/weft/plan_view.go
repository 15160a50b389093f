package main

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
	"github.com/weftrt/weft/scheduler"
)

// palette colours devices in the order the report lists them.
var palette = []string{"#8ecae6", "#ffb703", "#90be6d", "#cdb4db", "#f28482", "#bde0fe"}

const transferColour = "#e63946"

func deviceColours(rep *scheduler.Report) map[string]string {
	c := map[string]string{}
	for i, d := range rep.Devices {
		c[d.Name] = palette[i%len(palette)]
	}
	return c
}

// writeDot writes the plan as a Graphviz digraph: nodes filled with their
// device's colour, Transfer nodes as red diamonds, the cause as tooltip.
func writeDot(out io.Writer, p *plan.Plan, rep *scheduler.Report) error {
	w := bufio.NewWriter(out)
	colours := deviceColours(rep)
	id := nodeIDs(rep)
	fmt.Fprintf(w, "digraph %q {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"Helvetica\", fontsize=10];\n", p.Graph.Name)
	for _, d := range rep.Devices {
		fmt.Fprintf(w, "  // %s: %s\n", d.Name, colours[d.Name])
	}
	for _, pd := range rep.Placements {
		n := pd.Node
		label := n.Op
		if n.Name != "" && n.Op != ir.OpTransfer {
			label += "\\n" + dotEscape(shortName(n.Name))
		}
		attrs := fmt.Sprintf("fillcolor=%q", colours[pd.Device])
		if n.Op == ir.OpTransfer {
			attrs = fmt.Sprintf("shape=diamond, color=%q, penwidth=2, fillcolor=%q", transferColour, colours[pd.Device])
		}
		if pd.Warning {
			attrs += ", peripheries=2"
		}
		fmt.Fprintf(w, "  n%d [label=\"%s\", %s, tooltip=\"%s on %s: %s\"];\n", id[n], label, attrs,
			dotEscape(n.String()), pd.Device, dotEscape(pd.Text))
	}
	for _, pd := range rep.Placements {
		for _, v := range pd.Node.Inputs {
			if v == nil || v.Producer == nil {
				continue
			}
			if src, ok := id[v.Producer]; ok {
				style := ""
				if pd.Node.Op == ir.OpTransfer || v.Producer.Op == ir.OpTransfer {
					style = fmt.Sprintf(" [color=%q]", transferColour)
				}
				fmt.Fprintf(w, "  n%d -> n%d%s;\n", src, id[pd.Node], style)
			}
		}
	}
	fmt.Fprintln(w, "}")
	return w.Flush()
}

func nodeIDs(rep *scheduler.Report) map[*ir.Node]int {
	id := map[*ir.Node]int{}
	for i, pd := range rep.Placements {
		id[pd.Node] = i
	}
	return id
}

func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// shortName keeps the last two path elements of an exporter-style name.
func shortName(s string) string {
	parts := strings.Split(strings.Trim(s, "/"), "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	s = strings.Join(parts, "/")
	if len(s) > 28 {
		s = "…" + s[len(s)-27:]
	}
	return s
}

// layout places nodes in layers (a node one below its deepest input) and,
// within a layer, in plan order.
func layout(rep *scheduler.Report) (x, y map[*ir.Node]int, width, height int) {
	const dx, dy = 150, 64
	layer := map[*ir.Node]int{}
	count := map[int]int{}
	x, y = map[*ir.Node]int{}, map[*ir.Node]int{}
	maxLayer, maxCount := 0, 0
	for _, pd := range rep.Placements {
		l := 0
		for _, v := range pd.Node.Inputs {
			if v != nil && v.Producer != nil {
				if pl, ok := layer[v.Producer]; ok && pl+1 > l {
					l = pl + 1
				}
			}
		}
		layer[pd.Node] = l
		x[pd.Node] = 20 + count[l]*dx
		y[pd.Node] = 20 + l*dy
		count[l]++
		maxLayer, maxCount = max(maxLayer, l), max(maxCount, count[l])
	}
	return x, y, 40 + maxCount*dx, 60 + (maxLayer+1)*dy
}

// writeHTML writes a self-contained page: the DAG as inline SVG coloured
// by device (transfers marked, the cause of each node on hover), the
// report, and the estimated timeline. It loads nothing from the network.
func writeHTML(out io.Writer, title string, p *plan.Plan, rep *scheduler.Report) error {
	w := bufio.NewWriter(out)
	colours := deviceColours(rep)
	e := html.EscapeString
	fmt.Fprintf(w, `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>weft plan: %s</title>
<style>
body{font-family:system-ui,sans-serif;margin:16px;color:#222}
.node rect{stroke:#333;stroke-width:1}
.node.transfer rect{stroke:%s;stroke-width:3}
.node.warn rect{stroke:#d00;stroke-dasharray:4 2;stroke-width:3}
.node text{font-size:11px;pointer-events:none}
.edge{stroke:#999;fill:none}
.edge.transfer{stroke:%s;stroke-width:2}
#tip{position:fixed;background:#fff;border:1px solid #333;padding:6px;font-size:12px;display:none;max-width:480px;white-space:pre-wrap}
.legend span{display:inline-block;padding:2px 8px;margin-right:6px;border:1px solid #333}
pre{background:#f6f6f6;padding:8px;overflow:auto}
</style></head><body>
<h1>weft plan: %s</h1>
<p><span id="node-count">%d</span> nodes (%d transfers) in %d partitions on profile %s; estimated latency %.1f µs.</p>
<div class="legend">`, e(title), transferColour, transferColour, e(title), len(rep.Placements), rep.Transfers, len(p.Partitions), e(rep.Profile), rep.EstimatedUs)
	for _, d := range rep.Devices {
		fmt.Fprintf(w, `<span style="background:%s">%s (%s): %d nodes</span>`, colours[d.Name], e(d.Name), d.Kind, d.Nodes)
	}
	fmt.Fprintf(w, `<span style="border:3px solid %s">transfer</span></div>
<h2>Estimated timeline</h2>
`, transferColour)
	writeTimeline(w, rep, colours)
	fmt.Fprintf(w, "<h2>Report</h2>\n<pre>%s</pre>\n<h2>Graph</h2>\n", e(rep.Text()))

	x, y, width, height := layout(rep)
	const bw, bh = 130, 34
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" id="dag">`+"\n", width, height)
	for _, pd := range rep.Placements {
		for _, v := range pd.Node.Inputs {
			if v == nil || v.Producer == nil {
				continue
			}
			src := v.Producer
			if _, ok := x[src]; !ok {
				continue
			}
			class := "edge"
			if pd.Node.Op == ir.OpTransfer || src.Op == ir.OpTransfer {
				class += " transfer"
			}
			x1, y1, x2, y2 := x[src]+bw/2, y[src]+bh, x[pd.Node]+bw/2, y[pd.Node]
			fmt.Fprintf(w, `<path class="%s" d="M%d %d C%d %d %d %d %d %d"/>`+"\n", class, x1, y1, x1, y1+20, x2, y2-20, x2, y2)
		}
	}
	for i, pd := range rep.Placements {
		n := pd.Node
		class := "node"
		if n.Op == ir.OpTransfer {
			class += " transfer"
		}
		if pd.Warning {
			class += " warn"
		}
		info := fmt.Sprintf("%s\ndevice: %s\ncause: [%s] %s\nestimated: %.2f µs", n.String(), pd.Device, pd.Cause, pd.Text, pd.Us)
		fmt.Fprintf(w, `<g class="%s" data-i="%d" data-info="%s"><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="4" fill="%s"/>`,
			class, i, e(info), e(info), x[n], y[n], bw, bh, colours[pd.Device])
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text><text x="%d" y="%d">%s</text></g>`+"\n",
			x[n]+4, y[n]+14, e(n.Op), x[n]+4, y[n]+28, e(shortName(n.Name)))
	}
	fmt.Fprint(w, `</svg>
<div id="tip"></div>
<script>
(function(){
  var tip=document.getElementById("tip");
  document.querySelectorAll("#dag .node").forEach(function(g){
    g.addEventListener("mousemove",function(ev){tip.textContent=g.getAttribute("data-info");tip.style.display="block";tip.style.left=(ev.clientX+12)+"px";tip.style.top=(ev.clientY+12)+"px";});
    g.addEventListener("mouseleave",function(){tip.style.display="none";});
  });
})();
</script>
</body></html>
`)
	return w.Flush()
}

// writeTimeline draws one bar per partition on a µs axis.
func writeTimeline(w io.Writer, rep *scheduler.Report, colours map[string]string) {
	const width, row = 900, 22
	total := rep.EstimatedUs
	if total <= 0 {
		total = 1
	}
	rows := map[string]int{}
	for i, d := range rep.Devices {
		rows[d.Name] = i
	}
	h := len(rep.Devices)*row + 30
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" id="timeline">`+"\n", width+120, h)
	for _, d := range rep.Devices {
		fmt.Fprintf(w, `<text x="0" y="%d" font-size="12">%s</text>`+"\n", rows[d.Name]*row+15, html.EscapeString(d.Name))
	}
	for _, s := range rep.Timeline {
		x0 := 110 + s.StartUs/total*width
		wd := max((s.EndUs-s.StartUs)/total*width, 1)
		fmt.Fprintf(w, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" stroke="#333"><title>partition %d on %s: %d nodes, %.1f → %.1f µs</title></rect>`+"\n",
			x0, rows[s.Device]*row+2, wd, row-4, colours[s.Device], s.Partition, html.EscapeString(s.Device), s.Nodes, s.StartUs, s.EndUs)
	}
	fmt.Fprintf(w, `<text x="110" y="%d" font-size="11">0 µs</text><text x="%d" y="%d" font-size="11" text-anchor="end">%.1f µs</text></svg>`+"\n",
		h-4, 110+width, h-4, rep.EstimatedUs)
}
