package run

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/diff"
	"github.com/eepipe/eepipe/pipeline/pipelinetest"
)

// TestSingleAccountOfUnknownCompanyRefusesSeveralCompanies: an account without a known company (from the environment) must not
// write plans whose company columns name several companies: the key pair
// belongs to one of them at most.
func TestSingleAccountOfUnknownCompanyRefusesSeveralCompanies(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Accounts = []pipeline.Account{{Name: "default", Service: w.Acme}}
	plans := []*pipeline.InputPlan{
		pipelinetest.InPlan("", "No company", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}),
		pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "Acme", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}),
		pipelinetest.InPlan(pipelinetest.CraneCo.VATNumber, "Crane", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}),
		pipelinetest.InPlan("4999999999", "Unknown", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}),
	}
	cs, rep := run(t, w, plans, RunOptions{})
	if cs.Plans[0].Action != diff.ActionCreate {
		t.Errorf("plan without company columns: %s %s", cs.Plans[0].Action, cs.Plans[0].Reason)
	}
	for _, i := range []int{1, 2} {
		d := cs.Plans[i]
		if d.Action != diff.ActionFailed || !strings.Contains(d.Reason, "2 different companies") ||
			!strings.Contains(d.Reason, "Acme Foods (Pty) Ltd (8ovHrj)") || !strings.Contains(d.Reason, "Blue Crane Logistics (Q2wE9z)") {
			t.Errorf("plan %d: %s %s", i, d.Action, d.Reason)
		}
	}
	if d := cs.Plans[3]; d.Action != diff.ActionFailed || !strings.Contains(d.Reason, "company not found") {
		t.Errorf("unknown company: %s %s", d.Action, d.Reason)
	}
	if len(w.Acme.Plans) != 1 || rep.Summary().PlansCreated != 1 {
		t.Errorf("only the plan without company columns may be written: %d stored", len(w.Acme.Plans))
	}
	var b strings.Builder
	if err := rep.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "nothing of this plan was written"); n != 3 {
		t.Errorf("the summary says %d times that a failed plan wrote nothing, want 3:\n%s", n, b.String())
	}

	// One company, named by different identifiers, is fine.
	w = pipelinetest.NewWorld()
	w.Accounts = []pipeline.Account{{Name: "default", Service: w.Acme}}
	byReg := pipelinetest.InPlan("", "By registration", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1})
	byReg.Company = pipeline.CompanyIDs{Registration: pipelinetest.AcmeCo.RegistrationNumber}
	cs, _ = run(t, w, []*pipeline.InputPlan{pipelinetest.InPlan(pipelinetest.AcmeCo.VATNumber, "By VAT", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1}), byReg}, RunOptions{})
	for _, d := range cs.Plans {
		if d.Action != diff.ActionCreate {
			t.Errorf("%s: %s %s", d.Title(), d.Action, d.Reason)
		}
	}
}

// TestStoppedCreateIsNotCalledRejected: a create that is not sent because the run stopped is "not applied", and
// says so without calling it rejected.
func TestStoppedCreateIsNotCalledRejected(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Accounts = w.Accounts[:1]
	r := NewRunner(w.Accounts, nil, RunOptions{Concurrency: 1})
	cs, err := r.Plan(context.Background(), []*pipeline.InputPlan{pipelinetest.InPlan("", "P", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// Cancelled between the plan's dispatch and its create request.
	svc := r.account("acme")
	cancel()
	_, notes, err := r.create(ctx, svc, cs.Plans[0], nil)
	if err == nil || len(notes) != 0 {
		t.Fatalf("err %v notes %v", err, notes)
	}
	if strings.Contains(err.Error(), "rejected") || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("error %q", err)
	}
	if len(w.Acme.Plans) != 0 {
		t.Error("a create was sent after the run stopped")
	}
}

// TestReportRowsFollowTheInput: the report has one row per input row, in the order of the input rows
// (not grouped by plan and sorted by year), and a row that names its plan
// by plan_id alone carries the stored plan's start date.
func TestReportRowsFollowTheInput(t *testing.T) {
	w := pipelinetest.NewWorld()
	w.Accounts = w.Accounts[:1]
	ctx := context.Background()
	stored, err := w.Acme.CreatePlan(ctx, pipeline.NewPlan{Name: "Stored", StartDate: pipelinetest.Day("2025-09-01"), EndDate: pipelinetest.Day("2030-08-31")})
	if err != nil {
		t.Fatal(err)
	}
	byID := &pipeline.InputPlan{Origin: pipeline.Origin{File: "b.csv", Row: 2}, PlanID: stored.ID}
	a := &pipeline.InputPlan{Origin: pipeline.Origin{File: "a.csv", Row: 2}, Name: "New", StartDate: pipelinetest.Day("2026-09-01"), EndDate: pipelinetest.Day("2028-08-31")}
	// a.csv: line 2 is year 2, line 3 year 1 of the same plan; b.csv line 3
	// comes before b.csv line 2 in the plan's targets.
	a.Targets = []*pipeline.InputTarget{
		{Origin: pipeline.Origin{File: "a.csv", Row: 3}, YearNumber: 1, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 1})},
		{Origin: pipeline.Origin{File: "a.csv", Row: 2}, YearNumber: 2, TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 2})},
	}
	byID.Targets = []*pipeline.InputTarget{
		{Origin: pipeline.Origin{File: "b.csv", Row: 3}, FinancialYear: pipeline.FinancialYearOf(pipelinetest.Day("2027-09-01")), TargetType: pipeline.TargetAll, Counters: pipeline.CountersOf(map[string]int64{pipelinetest.Amt: 4})},
		{Origin: pipeline.Origin{File: "b.csv", Row: 2}, YearNumber: 1, TargetType: pipeline.TargetDisabled, Counters: pipeline.CountersOf(map[string]int64{pipelinetest.Wfs: 3})},
	}
	r := NewRunner(w.Accounts, nil, RunOptions{})
	_, rep, _, err := r.PlanApply(ctx, []*pipeline.InputPlan{a, byID}, time.Now(), ApplyHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("summary %+v", rep.Summary())
	}
	rows := rep.Rows()
	var got []string
	for _, row := range rows {
		got = append(got, row.File+":"+row.Location)
	}
	want := []string{"a.csv:line 2", "a.csv:line 3", "b.csv:line 2", "b.csv:line 3"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("row order %v, want %v", got, want)
	}
	for _, row := range rows[2:] {
		if row.StartDate != "2025-09-01" || row.PlanName != "Stored" || row.PlanID != stored.ID || row.Outcome != OutcomeUpdated {
			t.Errorf("row by plan_id: %+v", row)
		}
	}
	if rows[3].YearNumber != 3 || rows[3].FinancialYear != "2027/28" || rows[3].TargetID == 0 {
		t.Errorf("financial_year row: %+v", rows[3])
	}
}

// cancelOnCreate answers a create without a clear outcome and interrupts
// the run at the same moment, so the list that would tell whether the
// create was applied is never sent.
type cancelOnCreate struct {
	pipeline.PlanService
	cancel context.CancelFunc
}

func (c cancelOnCreate) CreatePlan(ctx context.Context, np pipeline.NewPlan) (*pipeline.Plan, error) {
	c.cancel()
	return nil, fmt.Errorf("POST: connection reset: %w", pipeline.ErrUnclearOutcome)
}

// TestUnclearCreateUncheckedIsFailed: a create without a clear answer whose check could not be made is a
// failure (the plan may exist), never "not applied".
func TestUnclearCreateUncheckedIsFailed(t *testing.T) {
	w := pipelinetest.NewWorld()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	accounts := []pipeline.Account{{Name: "acme", CompanyID: pipelinetest.AcmeCo.ID, Service: cancelOnCreate{PlanService: w.Acme, cancel: cancel}}}
	r := NewRunner(accounts, nil, RunOptions{})
	_, rep, _, err := r.PlanApply(ctx, []*pipeline.InputPlan{pipelinetest.InPlan("", "P", "2025-09-01", "2030-08-31", "", map[string]int64{pipelinetest.Amt: 1})}, time.Now(), ApplyHooks{})
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Plans[0]
	if p.Outcome != OutcomeFailed || !strings.Contains(p.Err.Error(), "could not be listed") {
		t.Fatalf("outcome %q: %v", p.Outcome, p.Err)
	}
	var b strings.Builder
	if err := rep.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "nothing of this plan was written") {
		t.Errorf("the summary claims nothing was written:\n%s", b.String())
	}
}
