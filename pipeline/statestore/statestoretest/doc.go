// Package statestoretest gives tests a PostgreSQL database for the state
// store: a fresh, empty database per test on the server that
// EEPIPE_TEST_POSTGRES names (.ci/postgres.sh starts one), or a skip with
// a message when there is none (a failure in CI).
package statestoretest
