// Command schemas turns the Kubernetes API's OpenAPI v2 document
// (api/openapi-spec/swagger.json in the k8s.io/kubernetes module) into
// standalone, strict JSON schemas, one file per kind, named as kubeconform
// looks them up with the schema location
// DIR/{{ .ResourceKind }}{{ .KindSuffix }}.json (deployment-apps-v1.json,
// service-v1.json). It is what the kubeconform schema repository's
// openapi2jsonschema does, in Go and offline:
//
//   - each kind's schema holds every definition it reaches, so it stands
//     alone;
//
//   - every object with declared properties gets
//     "additionalProperties": false (strict: a misspelt field is an
//     error, not ignored);
//
//   - apiVersion and kind are pinned to the kind's own values;
//
//   - IntOrString accepts a string or an integer, Quantity a string or a
//     number (as the API server does); formats are dropped.
//
//     go run . -swagger $(go env GOMODCACHE)/k8s.io/kubernetes@v1.37.2/api/openapi-spec/swagger.json -out DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	in := flag.String("swagger", "", "the Kubernetes OpenAPI v2 `file` (api/openapi-spec/swagger.json)")
	out := flag.String("out", "", "the `folder` to write the schemas to (made if missing)")
	flag.Parse()
	if *in == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: schemas -swagger FILE -out DIR")
		os.Exit(2)
	}
	n, err := convert(*in, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemas:", err)
		os.Exit(1)
	}
	fmt.Printf("schemas: %d kinds written to %s\n", n, *out)
}

const refPrefix = "#/definitions/"

func convert(in, out string) (int, error) {
	data, err := os.ReadFile(in)
	if err != nil {
		return 0, err
	}
	var doc struct {
		Definitions map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return 0, fmt.Errorf("%s: %v", in, err)
	}
	if len(doc.Definitions) == 0 {
		return 0, fmt.Errorf("%s: no definitions: is it the OpenAPI v2 swagger.json?", in)
	}
	defs := map[string]any{}
	for name, d := range doc.Definitions {
		switch name {
		case "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
			defs[name] = map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
		case "io.k8s.apimachinery.pkg.api.resource.Quantity":
			defs[name] = map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}
		default:
			defs[name] = strict(d)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	sort.Strings(names)
	written := map[string]string{}
	for _, name := range names {
		d, _ := doc.Definitions[name].(map[string]any)
		gvks, _ := d["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gvk, _ := g.(map[string]any)
			group, _ := gvk["group"].(string)
			version, _ := gvk["version"].(string)
			kind, _ := gvk["kind"].(string)
			if kind == "" || version == "" {
				continue
			}
			apiVersion := version
			if group != "" {
				apiVersion = group + "/" + version
			}
			file := fileName(kind, apiVersion)
			if prev, ok := written[file]; ok {
				return 0, fmt.Errorf("%s and %s would both be written to %s", prev, name, file)
			}
			written[file] = name
			s, err := standalone(defs, name, kind, apiVersion)
			if err != nil {
				return 0, err
			}
			b, err := json.Marshal(s)
			if err != nil {
				return 0, err
			}
			if err := os.WriteFile(filepath.Join(out, file), b, 0o644); err != nil {
				return 0, err
			}
		}
	}
	return len(written), nil
}

// fileName is kubeconform's {{ .ResourceKind }}{{ .KindSuffix }}.json:
// the kind in lower case, then the group's first label (none for the
// core group) and the version.
func fileName(kind, apiVersion string) string {
	suffix := ""
	group, version, ok := strings.Cut(apiVersion, "/")
	if ok {
		suffix = "-" + strings.ToLower(strings.Split(group, ".")[0]) + "-" + strings.ToLower(version)
	} else {
		suffix = "-" + strings.ToLower(group)
	}
	return strings.ToLower(kind) + suffix + ".json"
}

// strict copies a schema node with "additionalProperties": false on every
// object that declares properties and says nothing of others, and
// without formats.
func strict(n any) any {
	switch v := n.(type) {
	case map[string]any:
		m := make(map[string]any, len(v)+1)
		for k, x := range v {
			switch k {
			case "format":
				continue
			case "properties":
				props := map[string]any{}
				for p, ps := range x.(map[string]any) {
					props[p] = strict(ps)
				}
				m[k] = props
			default:
				m[k] = strict(x)
			}
		}
		if _, ok := v["properties"]; ok {
			if _, set := v["additionalProperties"]; !set {
				m["additionalProperties"] = false
			}
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = strict(x)
		}
		return s
	}
	return n
}

// standalone is the schema of one kind: its definition with apiVersion
// and kind pinned, and every definition it reaches under "definitions".
func standalone(defs map[string]any, name, kind, apiVersion string) (map[string]any, error) {
	top, ok := defs[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not an object schema", name)
	}
	s := make(map[string]any, len(top)+1)
	for k, v := range top {
		s[k] = v
	}
	props := map[string]any{}
	if p, ok := top["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	props["apiVersion"] = map[string]any{"type": "string", "enum": []any{apiVersion}}
	props["kind"] = map[string]any{"type": "string", "enum": []any{kind}}
	s["properties"] = props
	reached := map[string]any{}
	var walk func(any) error
	walk = func(n any) error {
		switch v := n.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				d := strings.TrimPrefix(r, refPrefix)
				if d == r {
					return fmt.Errorf("%s: $ref %q is not a local definition", name, r)
				}
				if _, seen := reached[d]; !seen {
					def, ok := defs[d]
					if !ok {
						return fmt.Errorf("%s: $ref %q names no definition", name, r)
					}
					reached[d] = def
					if err := walk(def); err != nil {
						return err
					}
				}
			}
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(s); err != nil {
		return nil, err
	}
	s["definitions"] = reached
	return s, nil
}
