package grid_test

// acceptanceDir holds the acceptance fixtures: workbooks other programs
// wrote (testdata/acceptance).
const acceptanceDir = "../../testdata/acceptance"
