package sector

// AnyBlankCounters reports whether any level or disability figure of the
// checks is not assessable because the files leave counters blank (which
// check --server can fill from the service).
func AnyBlankCounters(checks []SectorPlanCheck) bool {
	for _, c := range checks {
		for _, y := range c.Years {
			if len(y.Disability.Blank) > 0 {
				return true
			}
			for _, l := range y.Levels {
				if len(l.Blank) > 0 {
					return true
				}
			}
		}
	}
	return false
}
