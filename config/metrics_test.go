package config

import (
	"strings"
	"testing"
)

// TestMetricsSection: the metrics object's bounds, each at its limit and
// one past, and the listener's address rules; errors name the field.
func TestMetricsSection(t *testing.T) {
	const agents = `"agents": [{"agentId": "a", "skills": [{"root": "s"}]}]`
	good := map[string]Metrics{
		`{}`:                         {},
		`{"addr": "127.0.0.1:9464"}`: {Addr: "127.0.0.1:9464"},
		`{"addr": "[::1]:9464"}`:     {Addr: "[::1]:9464"},
		`{"addr": "localhost:0"}`:    {Addr: "localhost:0"},
		`{"addr": "0.0.0.0:9464", "allowNonLoopback": true}`: {Addr: "0.0.0.0:9464", AllowNonLoopback: true},
		`{"addr": ":9464", "allowNonLoopback": true}`:        {Addr: ":9464", AllowNonLoopback: true},
		`{"skillLabels": true}`:                              {SkillLabels: true},
		`{"skillLabels": true, "maxSkillSeries": 1}`:         {SkillLabels: true, MaxSkillSeries: 1},
		`{"skillLabels": true, "maxSkillSeries": 10000}`:     {SkillLabels: true, MaxSkillSeries: MaxMetricsSkillSeries},
	}
	for m, want := range good {
		f, err := Parse([]byte(`{`+agents+`, "metrics": `+m+`}`), "/cfg/loadout.json")
		if err != nil {
			t.Errorf("metrics %s: %v", m, err)
			continue
		}
		if f.Metrics != want {
			t.Errorf("metrics %s: %+v, want %+v", m, f.Metrics, want)
		}
	}
	bad := map[string]string{
		`{"addr": "0.0.0.0:9464"}`:                       "metrics.addr: \"0.0.0.0:9464\" is not a loopback address",
		`{"addr": ":9464"}`:                              "is not a loopback address",
		`{"addr": "10.0.0.5:9464"}`:                      "allowNonLoopback",
		`{"addr": "metrics.example.com:9464"}`:           "is not a loopback address",
		`{"addr": "127.0.0.1"}`:                          "metrics.addr: \"127.0.0.1\" is not HOST:PORT",
		`{"allowNonLoopback": true}`:                     "metrics.allowNonLoopback: is set but metrics.addr is not",
		`{"skillLabels": true, "maxSkillSeries": 10001}`: "metrics.maxSkillSeries: 10001: give 1 to 10000",
		`{"skillLabels": true, "maxSkillSeries": -1}`:    "metrics.maxSkillSeries: -1",
		`{"maxSkillSeries": 5}`:                          "metrics.maxSkillSeries: is set but metrics.skillLabels is not",
		`{"skillLabel": true}`:                           "skillLabel",
	}
	for m, want := range bad {
		_, err := Parse([]byte(`{`+agents+`, "metrics": `+m+`}`), "/cfg/loadout.json")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "/cfg/loadout.json") {
			t.Errorf("metrics %s: %v, want an error naming the file and saying %q", m, err, want)
		}
	}
}
