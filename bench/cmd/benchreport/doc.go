// Command benchreport is the last step of `make bench` (bench/run.sh): it
// assembles the raw benchmark output into bench/results/DATE-HOST.json,
// prints the weft/peer ratio table, and regenerates docs/performance.md
// from the newest results file. The format and rendering live in
// bench/report; this command only wires files to it.
package main
