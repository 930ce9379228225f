// Package pipelinetest holds what the domain packages' tests share: an
// in-memory PlanService (FakeService) and CompanyFinder (FakeFinder), a
// World of two accounts, and builders of plans and counters (InPlan, Day,
// SamplePlan). Production code never imports it.
package pipelinetest
