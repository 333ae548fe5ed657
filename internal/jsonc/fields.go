package jsonc

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// structInfo lists the JSON keys a struct type accepts.
type structInfo struct {
	byName map[string]field
	names  []string // sorted, for suggestions
}

type field struct {
	typ    reflect.Type
	quoted bool // `json:",string"` on a bool, number or string field
	depth  int  // embedding depth
	tagged bool // the name comes from a tag
}

var structCache sync.Map // reflect.Type -> *structInfo

// structFields returns the keys of struct type t, following encoding/json's
// rules: exported fields, named by their `json` tag or field name, "-"
// skipped, fields of embedded structs promoted, and of several fields with
// one name the shallowest wins, then the only tagged one, else none.
func structFields(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	candidates := map[string][]field{}
	visited := map[reflect.Type]bool{}
	level := []reflect.Type{t}
	for depth := 0; len(level) > 0; depth++ {
		var next []reflect.Type
		for _, st := range level {
			if visited[st] {
				continue
			}
			for i := 0; i < st.NumField(); i++ {
				sf := st.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTagName(name) {
					name = ""
				}
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, ft)
					continue
				}
				f := field{typ: sf.Type, depth: depth, tagged: name != ""}
				if name == "" {
					name = sf.Name
				}
				if slices.Contains(strings.Split(opts, ","), "string") {
					switch ft.Kind() {
					case reflect.Bool, reflect.String,
						reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
						reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
						reflect.Float32, reflect.Float64:
						f.quoted = true
					}
				}
				candidates[name] = append(candidates[name], f)
			}
		}
		// A type met again at this level counts twice (its fields clash);
		// one met at a shallower level is not explored again.
		for _, st := range level {
			visited[st] = true
		}
		level = next
	}
	si := &structInfo{byName: map[string]field{}}
	for name, fs := range candidates {
		if f, ok := dominant(fs); ok {
			si.byName[name] = f
			si.names = append(si.names, name)
		}
	}
	slices.Sort(si.names)
	actual, _ := structCache.LoadOrStore(t, si)
	return actual.(*structInfo)
}

func dominant(fs []field) (field, bool) {
	minDepth := fs[0].depth
	for _, f := range fs {
		minDepth = min(minDepth, f.depth)
	}
	var top []field
	for _, f := range fs {
		if f.depth == minDepth {
			top = append(top, f)
		}
	}
	if len(top) == 1 {
		return top[0], true
	}
	var tagged []field
	for _, f := range top {
		if f.tagged {
			tagged = append(tagged, f)
		}
	}
	if len(tagged) == 1 {
		return tagged[0], true
	}
	return field{}, false
}

func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
