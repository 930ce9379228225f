package diff

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

var updateChangeSet = flag.Bool("update-changeset", false, "rewrite pipeline/diff/testdata/changeset.golden")

// TestChangeSetGolden renders a change set with every action and compares
// it with testdata/changeset.golden, and the summary per plan with
// testdata/changeset-brief.golden (regenerate with -update-changeset).
func TestChangeSetGolden(t *testing.T) {
	base := pipeline.NewPlan{Name: "Acme 2025", StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2030-08-31"), Sector: "Manufacturing"}
	server := stored(t, base, map[string]int64{pipelinetest.Amt: 5})
	server.ID = 17
	for i := range server.Milestones {
		server.Milestones[i].ID = int64(100 + i)
		for j := range server.Milestones[i].Targets {
			server.Milestones[i].Targets[j].ID = int64(200 + 2*i + j)
		}
	}
	update := pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Acme 2025", "2025-09-01", "", "", map[string]int64{pipelinetest.Amt: 6, pipelinetest.Wfs: 2}, nil, map[string]int64{pipelinetest.Ifu: 1})
	update.Sector = "Construction"
	recreate := pipelinetest.InPlan("", "Acme 2025", "2025-09-01", "2027-08-31", "", map[string]int64{pipelinetest.Amt: 5})
	cs := &ChangeSet{Plans: []*PlanDiff{
		Diff(pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "New prefilled", "2026-09-01", "2028-08-31", "scorecard_acme_2025", map[string]int64{pipelinetest.Amt: 3, pipelinetest.Wfs: 0}), nil, DiffOptions{}),
		Diff(pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "New plain", "2026-09-01", "2027-08-31", "", map[string]int64{pipelinetest.Amt: 3, pipelinetest.Wfs: 0}), nil, DiffOptions{}),
		Diff(update, server, DiffOptions{}),
		Diff(pipelinetest.InPlan("", "Acme 2025", "2025-09-01", "", "", map[string]int64{pipelinetest.Amt: 5}), server, DiffOptions{}),
		Diff(recreate, server, DiffOptions{RecreateOnDateChange: true}),
		Diff(recreate, server, DiffOptions{}),
		Failed(pipelinetest.InPlan("0000000000", "Lost", "2026-09-01", "", ""), "company not found: no company has VAT 0000000000"),
	}}
	cs.Plans[0].Account, cs.Plans[0].Company = "acme", &pipelinetest.AcmeCo
	cs.Plans[2].Account = "acme"
	// The full render (diff -v) and the summary per plan (diff's default).
	for golden, opts := range map[string]RenderOptions{
		filepath.Join("testdata", "changeset.golden"):       {Unchanged: true},
		filepath.Join("testdata", "changeset-brief.golden"): {Unchanged: true, Brief: true},
	} {
		var b bytes.Buffer
		if err := cs.Render(&b, opts); err != nil {
			t.Fatal(err)
		}
		if *updateChangeSet {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update-changeset to create it)", err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("render differs from %s (run with -update-changeset after checking):\n%s", golden, b.String())
		}
	}
}
