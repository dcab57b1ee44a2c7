package resultfmt

import (
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/experiment"
)

// TestPluginStatsText: the tables print a plugin's name safe for a terminal
// and a call without round trips as "-", and the wall times under their own
// heading, last.
func TestPluginStatsText(t *testing.T) {
	r := &experiment.Result{
		PluginStats: []experiment.PluginStats{{Kind: "governor", Name: "evil\x1b[2Jname\u202e", Isolation: "process",
			Calls: []experiment.PluginCallStats{{Call: "Select", Calls: 10, RoundTrips: 4}, {Call: "Reflect", Calls: 10}}}},
		PluginWall: []experiment.PluginWall{{Kind: "governor", Name: "evil\x1b[2Jname\u202e",
			Calls: []experiment.PluginCallWall{{Call: "Select", Calls: 10, WallNS: 1_500_000, MeanNS: 150_000}, {Call: "Reflect", Calls: 10, WallNS: 900, MeanNS: 90}}}},
	}
	var b strings.Builder
	writeRunPluginStats(&b, r)
	got := b.String()
	want := `
` + PluginStatsHeading + `
governor evil\x1b[2Jname\u202e (process):
  call                        calls  round-trips  calls/trip
  Select                         10            4        2.50
  Reflect                        10            0           -
  total                          20            4        5.00

` + PluginWallHeading + `
governor evil\x1b[2Jname\u202e:
  call                        calls         time         mean
  Select                         10       1.5 ms     150.0 us
  Reflect                        10       900 ns        90 ns
  total                          20       1.5 ms      75.0 us
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
