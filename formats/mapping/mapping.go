package mapping

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/templates"
)

// MaxFileSize is the largest mapping file Load reads. A mapping file is a
// few hundred spellings; anything larger is not one.
const MaxFileSize = 1 << 20

// Kinds are the mapping file's top-level keys, in the order docs/formats.md
// lists them.
var Kinds = []string{"levels", "races", "genders", "sectors", "columns", "grades"}

// File is a parsed mapping file. Its maps are keyed by a spelling folded as
// templates.Normalize folds labels (levels also as templates.LevelWords
// folds them) and give eepipe's name for it.
type File struct {
	// Path is the file's name as given, for messages.
	Path string

	levels, levelWords, races, genders, sectors, columns, grades map[string]string
	// spellings keeps each name's spellings as written, per kind, for
	// Spellings.
	spellings map[string]map[string][]string
}

// Error is a problem of a mapping file, at a line of it.
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// Load reads and parses the mapping file at path. A file larger than
// MaxFileSize is refused before it is read whole.
func Load(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mapping file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("mapping file %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("larger than %d KiB: a mapping file lists spellings, not data", MaxFileSize>>10)}
	}
	return parse(data, path)
}

// parse parses a mapping file's content; path names it in messages. Every
// problem is reported, each with its line: an unknown key, a name its kind
// does not have, a value that is not a spelling or a list of them, and a
// spelling that two names of one kind would share.
func parse(data []byte, path string) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{Path: path, Msg: "not YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	f := &File{Path: path, spellings: map[string]map[string][]string{},
		levels: map[string]string{}, levelWords: map[string]string{}, races: map[string]string{},
		genders: map[string]string{}, sectors: map[string]string{}, columns: map[string]string{}, grades: map[string]string{}}
	p := &parser{f: f}
	if len(doc.Content) == 0 {
		return f, nil // an empty file teaches nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Path: path, Line: root.Line, Msg: "a mapping file is a map of the keys " + strings.Join(Kinds, ", ")}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		kind := key.Value
		if !slices.Contains(Kinds, kind) {
			p.errorf(key.Line, "unknown key %q: a mapping file has the keys %s", kind, strings.Join(Kinds, ", "))
			continue
		}
		if seen[kind] {
			p.errorf(key.Line, "%s is given twice", kind)
			continue
		}
		seen[kind] = true
		p.kind(kind, val)
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return f, nil
}

type parser struct {
	f    *File
	errs []error
}

func (p *parser) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, &Error{Path: p.f.Path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// kind reads one top-level key's map: a name to a spelling or a list of
// spellings (for grades: a grade to a level name).
func (p *parser) kind(kind string, val *yaml.Node) {
	if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
		return
	}
	if val.Kind != yaml.MappingNode {
		p.errorf(val.Line, "%s: expected a map of %s", kind, kindShape(kind))
		return
	}
	for i := 0; i+1 < len(val.Content); i += 2 {
		k, v := val.Content[i], val.Content[i+1]
		if kind == "grades" {
			p.grade(k, v)
			continue
		}
		name := k.Value
		if !knownName(kind, name) {
			p.errorf(k.Line, "%s: %q is not %s (%s)", kind, name, kindNoun(kind), strings.Join(suggest(kind, name), ", "))
			continue
		}
		for _, sp := range p.spellingList(kind, name, v) {
			p.add(kind, name, sp.Value, sp.Line)
		}
	}
}

// spellingList returns the spellings of one name: a scalar or a sequence of
// scalars.
func (p *parser) spellingList(kind, name string, v *yaml.Node) []*yaml.Node {
	switch v.Kind {
	case yaml.ScalarNode:
		return []*yaml.Node{v}
	case yaml.SequenceNode:
		var out []*yaml.Node
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode {
				p.errorf(item.Line, "%s: %s: each spelling is one piece of text", kind, name)
				continue
			}
			out = append(out, item)
		}
		return out
	}
	p.errorf(v.Line, "%s: %s: expected a spelling or a list of spellings", kind, name)
	return nil
}

// grade reads one entry of grades: a grade spelling to an occupational level.
func (p *parser) grade(k, v *yaml.Node) {
	if v.Kind != yaml.ScalarNode {
		p.errorf(v.Line, "grades: %q: expected one level name (%s)", k.Value, strings.Join(pipeline.OccupationalLevels, ", "))
		return
	}
	if !slices.Contains(pipeline.OccupationalLevels, v.Value) {
		p.errorf(v.Line, "grades: %q: %q is not an occupational level (%s)", k.Value, v.Value, strings.Join(pipeline.OccupationalLevels, ", "))
		return
	}
	p.add("grades", v.Value, k.Value, k.Line)
}

// add records spelling for name, refusing a blank spelling and one another
// name of the same kind already has.
func (p *parser) add(kind, name, spelling string, line int) {
	folded := templates.Normalize(spelling)
	if folded == "" {
		p.errorf(line, "%s: %s: a spelling with no letters or digits (%q) cannot be matched", kind, name, spelling)
		return
	}
	if own, ok := builtIn(kind, spelling); ok && own != name {
		p.errorf(line, "%s: %q is eepipe's own spelling of %s, so it cannot mean %s: give %s another spelling", kind, spelling, own, name, name)
		return
	}
	m := p.f.table(kind)
	if prev, taken := m[folded]; taken && prev != name {
		p.errorf(line, "%s: %q would mean both %s and %s: give it to one of them", kind, spelling, prev, name)
		return
	}
	if kind == "levels" {
		words := templates.LevelWords(spelling)
		if prev, taken := p.f.levelWords[words]; taken && prev != name {
			p.errorf(line, "levels: %q reads as a spelling of %s as well as of %s: give it to one of them", spelling, prev, name)
			return
		}
		p.f.levelWords[words] = name
	}
	m[folded] = name
	if p.f.spellings[kind] == nil {
		p.f.spellings[kind] = map[string][]string{}
	}
	p.f.spellings[kind][name] = append(p.f.spellings[kind][name], spelling)
}

// builtIn returns the name eepipe's own vocabulary reads a spelling of a
// kind as: templates.BuiltIn for levels, races and genders, the sector
// rule (pipeline.SectorValue) for sectors.
func builtIn(kind, spelling string) (string, bool) {
	switch kind {
	case "levels", "races", "genders":
		return templates.BuiltIn(kind, spelling)
	case "sectors":
		v, _, _, ok := pipeline.SectorValue(spelling)
		return v, ok
	}
	return "", false
}

// Matcher returns the grid vocabulary of cat (nil: the default catalog)
// with the file's levels, races and genders taught to it
// (templates.Matcher.Taught); a nil or empty file gives cat's own.
func (f *File) Matcher(cat *pipeline.Catalog) *templates.Matcher {
	m := templates.NewMatcher(cat)
	if f.Empty() {
		return m
	}
	sp := templates.Spellings{Levels: map[string]string{}, Races: map[string]string{}, Genders: map[string]string{}}
	for kind, into := range map[string]map[string]string{"levels": sp.Levels, "races": sp.Races, "genders": sp.Genders} {
		for name, spellings := range f.spellings[kind] {
			for _, s := range spellings {
				into[s] = name
			}
		}
	}
	return m.Taught(sp)
}

// table returns the map of one kind.
func (f *File) table(kind string) map[string]string {
	switch kind {
	case "levels":
		return f.levels
	case "races":
		return f.races
	case "genders":
		return f.genders
	case "sectors":
		return f.sectors
	case "columns":
		return f.columns
	}
	return f.grades
}

// names returns the names a kind may map, in their documented order.
func names(kind string) []string {
	switch kind {
	case "levels":
		return pipeline.Levels
	case "races":
		return pipeline.Races
	case "genders":
		return pipeline.Genders
	case "sectors":
		return pipeline.Sectors
	case "columns":
		return Columns()
	}
	return nil
}

// Columns returns the column names the columns key may map: the flat
// table's columns, the roster's, and the default catalog's counters.
func Columns() []string {
	out := append(slices.Clone(pipeline.FlatColumns), pipeline.RosterColumns...)
	return append(out, pipeline.DefaultCatalog().Names()...)
}

func knownName(kind, name string) bool { return slices.Contains(names(kind), name) }

func kindNoun(kind string) string {
	return map[string]string{
		"levels": "a level name", "races": "a race name", "genders": "a gender name",
		"sectors": "a sector as the service spells it", "columns": "a column name",
	}[kind]
}

func kindShape(kind string) string {
	if kind == "grades" {
		return "a grade to a level name"
	}
	return "a name to its spellings"
}

// suggest returns the names of a kind closest to name, or the whole list of
// a short kind.
func suggest(kind, name string) []string {
	all := names(kind)
	if len(all) <= 10 {
		return all
	}
	if near := pipeline.Closest(name, all, 3); len(near) > 0 {
		return []string{"closest: " + strings.Join(near, ", ")}
	}
	return []string{"docs/formats.md lists them"}
}

// lookup returns the name a spelling of a kind has in the file.
func (f *File) lookup(kind, s string) (string, bool) {
	if f == nil {
		return "", false
	}
	name, ok := f.table(kind)[templates.Normalize(s)]
	return name, ok
}

// Level returns the level name a row label or level cell names by the
// file's spellings (folded as templates.Normalize, then as
// templates.LevelWords folds level labels).
func (f *File) Level(s string) (string, bool) {
	if name, ok := f.lookup("levels", s); ok {
		return name, true
	}
	if f == nil {
		return "", false
	}
	name, ok := f.levelWords[templates.LevelWords(s)]
	return name, ok
}

// Race returns the race name a header or cell names by the file's spellings.
func (f *File) Race(s string) (string, bool) { return f.lookup("races", s) }

// Gender returns the gender name a header or cell names by the file's
// spellings.
func (f *File) Gender(s string) (string, bool) { return f.lookup("genders", s) }

// Sector returns the service's sector value a cell names by the file's
// spellings.
func (f *File) Sector(s string) (string, bool) { return f.lookup("sectors", s) }

// Column returns the column name a header names by the file's spellings.
func (f *File) Column(s string) (string, bool) { return f.lookup("columns", s) }

// Grade returns the occupational level a job grade is mapped to.
func (f *File) Grade(s string) (string, bool) { return f.lookup("grades", s) }

// Spellings returns the spellings the file gives a name of a kind, as
// written, in the file's order (for grades: the grades mapped to a level).
func (f *File) Spellings(kind, name string) []string {
	if f == nil {
		return nil
	}
	return f.spellings[kind][name]
}

// Empty reports whether the file teaches nothing.
func (f *File) Empty() bool { return f == nil || len(f.spellings) == 0 }
