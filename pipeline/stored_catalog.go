package pipeline

// CatalogOfStored returns the counter catalog a plan the service returned
// shows: that of its first target with counters (catalogOfTarget; the
// service gives every target every counter it has), or nil when no target
// carries a counter. Runner.ServiceCatalog and check --server's per-plan
// catalog both read it here.
func CatalogOfStored(p *Plan) *Catalog {
	for _, m := range p.Milestones {
		for _, t := range m.Targets {
			if c := CatalogOfTarget(t); c != nil {
				return c
			}
		}
	}
	return nil
}

// catalogOfTarget is the one route from the service's answers to a
// counter catalog: the counter names of a target it returned (the keys of
// its counters map, docs/sandbox.md, "Behaviour"), or nil when the target carries no
// counter.
func CatalogOfTarget(t Target) *Catalog {
	if t.Counters.IsEmpty() {
		return nil
	}
	c, err := catalogFromCounters(t.Counters.Map())
	if err != nil {
		return nil
	}
	return c
}
