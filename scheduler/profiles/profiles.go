package profiles

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.json
var files embed.FS

// Names lists the bundled profiles, sorted.
func Names() []string {
	ents, _ := fs.ReadDir(files, ".")
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Read returns the JSON text of a bundled profile.
func Read(name string) ([]byte, error) {
	data, err := files.ReadFile(name + ".json")
	if err != nil {
		return nil, fmt.Errorf("no bundled profile %q (have: %s)", name, strings.Join(Names(), ", "))
	}
	return data, nil
}
