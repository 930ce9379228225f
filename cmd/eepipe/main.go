// Command eepipe moves Employment Equity plan targets between spreadsheets
// and the B-BBEE compliance service. See README.md.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], SystemIO()))
}
