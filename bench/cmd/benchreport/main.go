// Usage:
//
//	benchreport assemble -dir RAW -out bench/results   # writes DATE-HOST.json, prints the ratio table
//	benchreport markdown [-results bench/results] [-o docs/performance.md]
//
// `assemble` reads the files bench/run.sh left in RAW; `markdown`
// regenerates the performance page from the newest results file.

package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/weftrt/weft/bench/report"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("want a command: assemble or markdown")
	}
	switch args[0] {
	case "assemble":
		fs := flag.NewFlagSet("assemble", flag.ContinueOnError)
		dir := fs.String("dir", "", "the directory bench/run.sh wrote raw results into")
		out := fs.String("out", "bench/results", "directory for the results file")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *dir == "" {
			return fmt.Errorf("assemble: no -dir")
		}
		r, err := report.Assemble(*dir, time.Now())
		if err != nil {
			return err
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		path := filepath.Join(*out, report.FileName(time.Now(), r.Host))
		if err := report.Write(path, r); err != nil {
			return err
		}
		report.Table(stdout, r)
		fmt.Fprintf(stdout, "\nwrote %s\n", path)
		return nil
	case "markdown":
		fs := flag.NewFlagSet("markdown", flag.ContinueOnError)
		dir := fs.String("results", "bench/results", "directory of results files (the newest is used)")
		out := fs.String("o", "docs/performance.md", "the page to write")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		path, err := report.Newest(*dir)
		if err != nil {
			return err
		}
		r, err := report.Read(path)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		report.Markdown(&buf, r, filepath.ToSlash(path))
		if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s from %s\n", *out, path)
		return nil
	}
	return fmt.Errorf("unknown command %q (want assemble or markdown)", args[0])
}
