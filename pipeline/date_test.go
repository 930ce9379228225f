package pipeline

// mustDate is ParseDate for the tests' literal dates; it panics on one
// that is not valid.
func mustDate(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}
