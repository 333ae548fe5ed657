package source

import (
	"net/url"
	"strings"
	"testing"
)

// TestOrigin: an allowlist origin is scheme and host (and port) alone,
// compared in lower case without the default port; anything more, or a
// host that is not a DNS name or an IP address, is refused with why.
func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://cdn.example.com":      "https://cdn.example.com",
		"HTTPS://CDN.Example.com:443":  "https://cdn.example.com",
		"http://x:80":                  "http://x",
		"http://x:443":                 "http://x:443",
		"https://x:80":                 "https://x:80",
		"http://[::1]:8080":            "http://[::1]:8080",
		"https://[2001:DB8::1]":        "https://[2001:db8::1]",
		"http://127.0.0.1:65535":       "http://127.0.0.1:65535",
		"http://a-b.c0":                "http://a-b.c0",
		"https://" + label(63) + ".io": "https://" + label(63) + ".io",
		"https://" + host(253):         "https://" + host(253),     // the longest DNS name
		"https://az.AZ.09.example":     "https://az.az.09.example", // each end of each range a label may use
	} {
		got, err := Origin(in)
		if err != nil || got != want {
			t.Errorf("Origin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"https://":                                           "has no host",
		"https:cdn.example.com":                              "has no host",
		"cdn.example.com":                                    "give an http:// or https:// origin",
		"ftp://cdn.example.com":                              "give an http:// or https:// origin",
		"https://u@cdn.example.com":                          "user name or password",
		"https://cdn.example.com/":                           "more than an origin",
		"https://cdn.example.com/x":                          "more than an origin",
		"https://cdn.example.com?":                           "more than an origin",
		"https://cdn.example.com#":                           "more than an origin",
		"https://cdn.example.com?a=1":                        "more than an origin",
		"https://cdn.example.com:0":                          "port is not a number from 1 to 65535",
		"https://cdn.example.com:65536":                      "port is not a number from 1 to 65535",
		"https://x:99999999999999999999":                     "port is not a number from 1 to 65535",
		"https://:443":                                       "not a DNS name",
		"https://*.example.com":                              "a wildcard allows nothing",
		"https://-a.example.com":                             "not a DNS name",
		"https://a-.example.com":                             "not a DNS name",
		"https://a..example.com":                             "not a DNS name",
		"https://" + label(64) + ".io":                       "not a DNS name",
		"https://" + strings.Repeat(label(60)+".", 5) + "io": "not a DNS name",
		"https://" + host(254):                               "not a DNS name", // one past the longest
		"http://[fe80::1%25en0]":                             "without a zone",
		"http://[1:2:3:4:5:6:7:8:9]":                         "is not a URL",
	} {
		_, err := Origin(in)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("Origin(%q) = %v; want an error saying %q", in, err, why)
		}
	}
	// OriginOf compares request URLs the same way.
	for in, want := range map[string]string{
		"https://CDN.example.com:443/a?b#c": "https://cdn.example.com",
		"HTTP://[::1]/x":                    "http://[::1]",
	} {
		u, _ := url.Parse(in)
		if got := OriginOf(u); got != want {
			t.Errorf("OriginOf(%s) = %q, want %q", in, got, want)
		}
	}
}

func label(n int) string { return strings.Repeat("a", n) }

// host is a DNS name of n characters (n > 192): three 63-letter labels
// and one of b's.
func host(n int) string { return strings.Repeat(label(63)+".", 3) + strings.Repeat("b", n-192) }
