package keyrotate

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// SetAccountKey returns the configuration document doc with the api_key of
// its account index (0-based, in the accounts list) set to key and its
// api_key_id to id (added after api_key when absent). Only those values'
// text changes: every other byte, the comments, order and layout
// included, stays as it was. A document whose account cannot be found, or
// whose api_key is not a plain scalar on one line, is an error.
func SetAccountKey(doc []byte, index int, key string, id int64) ([]byte, error) {
	acct, err := accountNode(doc, index)
	if err != nil {
		return nil, err
	}
	keyNode, keyLabel := mapValue(acct, "api_key")
	if keyNode == nil {
		return nil, fmt.Errorf("account %d of the configuration has no api_key to replace", index+1)
	}
	lines := bytes.SplitAfter(doc, []byte("\n"))
	edits := []lineEdit{}
	e, err := valueEdit(lines, keyNode, scalarText(key))
	if err != nil {
		return nil, fmt.Errorf("api_key of account %d: %w", index+1, err)
	}
	edits = append(edits, e)
	idText := strconv.FormatInt(id, 10)
	if idNode, _ := mapValue(acct, "api_key_id"); idNode != nil {
		e, err := valueEdit(lines, idNode, idText)
		if err != nil {
			return nil, fmt.Errorf("api_key_id of account %d: %w", index+1, err)
		}
		edits = append(edits, e)
	} else {
		// A new line after api_key's, indented as api_key is.
		line := keyNode.Line - 1
		indent := bytes.Repeat([]byte(" "), keyLabel.Column-1)
		if acct.Style&yaml.FlowStyle != 0 {
			return nil, fmt.Errorf("account %d of the configuration is written inline ({...}); add api_key_id: %s to it by hand", index+1, idText)
		}
		edits = append(edits, lineEdit{line: line, insertAfter: append(append(indent, "api_key_id: "+idText...), lineEnd(lines[line])...)})
	}
	var out bytes.Buffer
	for i, l := range lines {
		for _, e := range edits {
			if e.line == i && e.insertAfter == nil {
				l = e.apply(l)
			}
		}
		out.Write(l)
		for _, e := range edits {
			if e.line == i && e.insertAfter != nil {
				if len(l) > 0 && l[len(l)-1] != '\n' {
					out.WriteByte('\n')
				}
				out.Write(e.insertAfter)
			}
		}
	}
	b := out.Bytes()
	// The edit is read back: the account must now say what was written.
	check, err := accountNode(b, index)
	if err != nil {
		return nil, fmt.Errorf("the edited configuration does not read back: %w", err)
	}
	if k, _ := mapValue(check, "api_key"); k == nil || k.Value != key {
		return nil, errors.New("the edited configuration does not read back with the new api_key")
	}
	if k, _ := mapValue(check, "api_key_id"); k == nil || k.Value != idText {
		return nil, errors.New("the edited configuration does not read back with the new api_key_id")
	}
	return b, nil
}

// lineEdit replaces the bytes [from, to) of line (0-based) with text, or
// inserts insertAfter as a line after it.
type lineEdit struct {
	line        int
	from, to    int
	text        string
	insertAfter []byte
}

func (e lineEdit) apply(l []byte) []byte {
	out := append([]byte{}, l[:e.from]...)
	out = append(out, e.text...)
	return append(out, l[e.to:]...)
}

// lineEnd is the line ending of l ("\r\n", "\n" or "" on a last line
// without one), so that an inserted line ends as its neighbour does.
func lineEnd(l []byte) []byte {
	switch {
	case bytes.HasSuffix(l, []byte("\r\n")):
		return []byte("\r\n")
	case bytes.HasSuffix(l, []byte("\n")):
		return []byte("\n")
	}
	return nil
}

// valueEdit is the edit that replaces a scalar value node's text: plain,
// single- or double-quoted, on one line.
func valueEdit(lines [][]byte, n *yaml.Node, text string) (lineEdit, error) {
	if n.Kind != yaml.ScalarNode || n.Line < 1 || n.Line > len(lines) {
		return lineEdit{}, errors.New("not a single value")
	}
	l := lines[n.Line-1]
	from := n.Column - 1
	if from < 0 || from >= len(l) {
		return lineEdit{}, errors.New("its place in the file is not found")
	}
	var to int
	switch n.Style {
	case 0:
		to = from + len(n.Value)
		if to > len(l) || string(l[from:to]) != n.Value {
			return lineEdit{}, errors.New("it is not written on one line as it reads")
		}
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		q := l[from]
		end := bytes.IndexByte(l[from+1:], q)
		if end < 0 {
			return lineEdit{}, errors.New("its quoted value does not end on its line")
		}
		to = from + 1 + end + 1
	default:
		return lineEdit{}, errors.New("it is written as a block or tagged value; write it as a plain value")
	}
	return lineEdit{line: n.Line - 1, from: from, to: to, text: text}, nil
}

var plainScalar = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// scalarText is s as a YAML value: plain when it can be, else double-quoted.
func scalarText(s string) string {
	if plainScalar.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// accountNode returns the mapping of account index in the document's
// accounts list.
func accountNode(doc []byte, index int) (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("the configuration is not YAML: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the configuration is not a mapping")
	}
	accts, _ := mapValue(root.Content[0], "accounts")
	if accts == nil || accts.Kind != yaml.SequenceNode || index < 0 || index >= len(accts.Content) {
		return nil, fmt.Errorf("the configuration has no account %d", index+1)
	}
	a := accts.Content[index]
	if a.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("account %d of the configuration is not a mapping", index+1)
	}
	return a, nil
}

// mapValue returns the value and the key node of key in mapping m.
func mapValue(m *yaml.Node, key string) (value, label *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1], m.Content[i]
		}
	}
	return nil, nil
}
