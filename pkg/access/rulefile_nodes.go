package access

import (
	"fmt"
	"os/user"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// mapping returns the values of a mapping node by key, reporting a node
// that is not a mapping, an unknown key and a key given twice.
func (fp *fileParser) mapping(n *yaml.Node, known ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n == nil {
		return out
	}
	if n.Kind != yaml.MappingNode {
		fp.errorf(n, "want a mapping with keys %v", known)
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(known, k.Value):
			fp.errorf(k, "unknown key %q (known: %v)", k.Value, known)
		case out[k.Value] != nil:
			fp.errorf(k, "%s given twice", k.Value)
		default:
			out[k.Value] = v
		}
	}
	return out
}

// sequence returns the items of a sequence node (none for an absent
// one), reporting a node that is not a sequence.
func (fp *fileParser) sequence(n *yaml.Node) []*yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		fp.errorf(n, "want a list")
		return nil
	}
	return n.Content
}

// strings returns the scalar items of a list of names; a single scalar is
// a list of one.
func (fp *fileParser) strings(n *yaml.Node) []*yaml.Node {
	if n != nil && n.Kind == yaml.ScalarNode {
		return []*yaml.Node{n}
	}
	var out []*yaml.Node
	for _, item := range fp.sequence(n) {
		if item.Kind != yaml.ScalarNode {
			fp.errorf(item, "want a name")
			continue
		}
		out = append(out, item)
	}
	return out
}

// scalar returns the value of a required scalar, reporting it missing at
// its parent's line.
func (fp *fileParser) scalar(n, parent *yaml.Node, key string) string {
	switch {
	case n == nil:
		fp.errorf(parent, "%s is missing", key)
	case n.Kind != yaml.ScalarNode || n.Value == "":
		fp.errorf(n, "%s: want a name", key)
	default:
		return n.Value
	}
	return ""
}

// The keys of a binding's match.
var matchKeys = []string{"uid", "gid", "user", "group", "subject", "commonName", "organization", "san", "process", "anyone"}

// match returns the match of one item of a binding's list: a mapping of
// exactly one key.
func (fp *fileParser) match(n *yaml.Node) (Match, bool) {
	m := fp.mapping(n, matchKeys...)
	if n.Kind == yaml.MappingNode && len(n.Content) != 2 {
		fp.errorf(n, "want one identity per item (one of %v)", matchKeys)
		return Match{}, false
	}
	for key, v := range m {
		if v.Kind != yaml.ScalarNode {
			fp.errorf(v, "%s: want a value", key)
			return Match{}, false
		}
		match, err := matchOf(key, v.Value)
		if err != nil {
			fp.errorf(v, "%s: %v", key, err)
			return Match{}, false
		}
		return match, true
	}
	return Match{}, false
}

// matchOf returns the match of one key and value; user and group names
// are looked up now.
func matchOf(key, value string) (Match, error) {
	switch key {
	case "uid", "gid":
		n, err := strconv.ParseUint(value, 10, 32)
		if err != nil {
			return Match{}, fmt.Errorf("want a number, not %q", value)
		}
		if key == "uid" {
			return UID(uint32(n)), nil
		}
		return GID(uint32(n)), nil
	case "user":
		u, err := user.Lookup(value)
		if err != nil {
			return Match{}, err
		}
		return matchOf("uid", u.Uid)
	case "group":
		g, err := user.LookupGroup(value)
		if err != nil {
			return Match{}, err
		}
		return matchOf("gid", g.Gid)
	case "subject":
		return CertSubject(value), nil
	case "commonName":
		return CertCommonName(value), nil
	case "organization":
		return CertOrganization(value), nil
	case "san":
		return CertSAN(value), nil
	case "process":
		return ProcessName(value), nil
	}
	if b, err := strconv.ParseBool(value); err != nil || !b {
		return Match{}, fmt.Errorf("want true, not %q", value)
	}
	return Anyone(), nil
}
