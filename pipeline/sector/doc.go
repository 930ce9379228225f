// Package sector measures plans against the 2025 sectoral numerical
// targets: the targets table (SectorTargets, DefaultSectorTargets,
// LoadSectorTargets), the check of a plan's years and levels
// (CheckPlanSector, SectorPlanCheck) with plans read from the service for
// check --server, and how many people must change group to meet a target
// (SectorNeed).
//
// It answers: does this plan meet its sector's targets, and by how much
// does it fall short? It imports only the model (docs/check.md).
package sector
