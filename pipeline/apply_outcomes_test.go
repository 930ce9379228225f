package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSingleAccountOfUnknownCompanyRefusesSeveralCompanies: an account without a known company (from the environment) must not
// write plans whose company columns name several companies: the key pair
// belongs to one of them at most.
func TestSingleAccountOfUnknownCompanyRefusesSeveralCompanies(t *testing.T) {
	w := newWorld()
	w.accounts = []Account{{Name: "default", Service: w.acme}}
	plans := []*InputPlan{
		inPlan("", "No company", "2025-09-01", "2030-08-31", "", map[string]int64{amt: 1}),
		inPlan(acmeCo.VATNumber, "Acme", "2025-09-01", "2030-08-31", "", map[string]int64{amt: 1}),
		inPlan(craneCo.VATNumber, "Crane", "2025-09-01", "2030-08-31", "", map[string]int64{amt: 1}),
		inPlan("4999999999", "Unknown", "2025-09-01", "2030-08-31", "", map[string]int64{amt: 1}),
	}
	cs, rep := run(t, w, plans, RunOptions{})
	if cs.Plans[0].Action != ActionCreate {
		t.Errorf("plan without company columns: %s %s", cs.Plans[0].Action, cs.Plans[0].Reason)
	}
	for _, i := range []int{1, 2} {
		d := cs.Plans[i]
		if d.Action != actionFailed || !strings.Contains(d.Reason, "2 different companies") ||
			!strings.Contains(d.Reason, "Acme Foods (Pty) Ltd (8ovHrj)") || !strings.Contains(d.Reason, "Blue Crane Logistics (Q2wE9z)") {
			t.Errorf("plan %d: %s %s", i, d.Action, d.Reason)
		}
	}
	if d := cs.Plans[3]; d.Action != actionFailed || !strings.Contains(d.Reason, "company not found") {
		t.Errorf("unknown company: %s %s", d.Action, d.Reason)
	}
	if len(w.acme.plans) != 1 || rep.Summary().PlansCreated != 1 {
		t.Errorf("only the plan without company columns may be written: %d stored", len(w.acme.plans))
	}
	var b strings.Builder
	if err := rep.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "nothing of this plan was written"); n != 3 {
		t.Errorf("the summary says %d times that a failed plan wrote nothing, want 3:\n%s", n, b.String())
	}

	// One company, named by different identifiers, is fine.
	w = newWorld()
	w.accounts = []Account{{Name: "default", Service: w.acme}}
	byReg := inPlan("", "By registration", "2025-09-01", "2030-08-31", "", map[string]int64{amt: 1})
	byReg.Company = CompanyIDs{Registration: acmeCo.RegistrationNumber}
	cs, _ = run(t, w, []*InputPlan{inPlan(acmeCo.VATNumber, "By VAT", "2025-09-01", "2030-08-31", "", map[string]int64{amt: 1}), byReg}, RunOptions{})
	for _, d := range cs.Plans {
		if d.Action != ActionCreate {
			t.Errorf("%s: %s %s", d.Title(), d.Action, d.Reason)
		}
	}
}

// TestStoppedCreateIsNotCalledRejected: a create that is not sent because the run stopped is "not applied", and
// says so without calling it rejected.
func TestStoppedCreateIsNotCalledRejected(t *testing.T) {
	w := newWorld()
	w.accounts = w.accounts[:1]
	r := NewRunner(w.accounts, nil, RunOptions{Concurrency: 1})
	cs, err := r.Plan(context.Background(), []*InputPlan{inPlan("", "P", "2025-09-01", "2030-08-31", "", map[string]int64{amt: 1})})
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
	if len(w.acme.plans) != 0 {
		t.Error("a create was sent after the run stopped")
	}
}

// TestReportRowsFollowTheInput: the report has one row per input row, in the order of the input rows
// (not grouped by plan and sorted by year), and a row that names its plan
// by plan_id alone carries the stored plan's start date.
func TestReportRowsFollowTheInput(t *testing.T) {
	w := newWorld()
	w.accounts = w.accounts[:1]
	ctx := context.Background()
	stored, err := w.acme.CreatePlan(ctx, NewPlan{Name: "Stored", StartDate: day("2025-09-01"), EndDate: day("2030-08-31")})
	if err != nil {
		t.Fatal(err)
	}
	byID := &InputPlan{Origin: Origin{File: "b.csv", Row: 2}, PlanID: stored.ID}
	a := &InputPlan{Origin: Origin{File: "a.csv", Row: 2}, Name: "New", StartDate: day("2026-09-01"), EndDate: day("2028-08-31")}
	// a.csv: line 2 is year 2, line 3 year 1 of the same plan; b.csv line 3
	// comes before b.csv line 2 in the plan's targets.
	a.Targets = []*InputTarget{
		{Origin: Origin{File: "a.csv", Row: 3}, YearNumber: 1, TargetType: TargetAll, Counters: CountersOf(map[string]int64{amt: 1})},
		{Origin: Origin{File: "a.csv", Row: 2}, YearNumber: 2, TargetType: TargetAll, Counters: CountersOf(map[string]int64{amt: 2})},
	}
	byID.Targets = []*InputTarget{
		{Origin: Origin{File: "b.csv", Row: 3}, FinancialYear: FinancialYearOf(day("2027-09-01")), TargetType: TargetAll, Counters: CountersOf(map[string]int64{amt: 4})},
		{Origin: Origin{File: "b.csv", Row: 2}, YearNumber: 1, TargetType: TargetDisabled, Counters: CountersOf(map[string]int64{wfs: 3})},
	}
	r := NewRunner(w.accounts, nil, RunOptions{})
	_, rep, _, err := r.PlanApply(ctx, []*InputPlan{a, byID}, time.Now(), ApplyHooks{})
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
	PlanService
	cancel context.CancelFunc
}

func (c cancelOnCreate) CreatePlan(ctx context.Context, np NewPlan) (*Plan, error) {
	c.cancel()
	return nil, fmt.Errorf("POST: connection reset: %w", ErrUnclearOutcome)
}

// TestUnclearCreateUncheckedIsFailed: a create without a clear answer whose check could not be made is a
// failure (the plan may exist), never "not applied".
func TestUnclearCreateUncheckedIsFailed(t *testing.T) {
	w := newWorld()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	accounts := []Account{{Name: "acme", CompanyID: acmeCo.ID, Service: cancelOnCreate{PlanService: w.acme, cancel: cancel}}}
	r := NewRunner(accounts, nil, RunOptions{})
	_, rep, _, err := r.PlanApply(ctx, []*InputPlan{inPlan("", "P", "2025-09-01", "2030-08-31", "", map[string]int64{amt: 1})}, time.Now(), ApplyHooks{})
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
