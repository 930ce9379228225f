// Package propose works out a draft plan from a workforce profile: year
// targets that reach the sector's targets in the final year, moving the
// fewest people (docs/profile-and-propose.md).
//
// It is the one home of these questions: how many people change group at
// a level (Plan: exactly max(0, need_male - designated_male) +
// max(0, need_female - designated_female), need being the smallest count
// that meets the sector's figure at the level's headcount by the sector
// check's own arithmetic, sector.SectorNeed); who they are (the
// non-designated people of the level first, in proportion to their
// counts, then the surplus of the other designated group; the people they
// become are split among the designated races by Weights, by default in
// proportion to the designated people already there); how many people
// with disabilities are added (up to 3% of the employees of the six
// levels, where there is room, no disabled counter above its cell's
// all-employees counter); how a level grows (--growth); and how the years
// between the profile and the final year step (every counter between its
// profile and final value, monotonic: the changes are applied in whole
// steps, each year a larger share of them). The sector check
// (sector.CheckPlanSector) then measures the plan; nothing here
// re-implements its percentage rule.
package propose
