package planapi

import (
	"errors"
	"net/http"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline"
)

// Err translates an error of the client into the pipeline's terms: the
// result matches, with errors.Is, the pipeline sentinel the wire error
// means, and still matches the client's own error types with errors.As.
// Its text is the client's. nil stays nil; an error with no pipeline
// meaning is returned as it is.
//
//	401, 403                       pipeline.ErrUnauthorized
//	404                            pipeline.ErrNotFound
//	409                            pipeline.ErrConflict
//	400, 422                       pipeline.ErrInvalid
//	429                            pipeline.ErrRateLimited
//	apiclient.ErrUnclearOutcome    pipeline.ErrUnclearOutcome
//	apiclient.ErrUnavailable       pipeline.ErrUnavailable
//	apiclient.ErrMaybeApplied      pipeline.ErrMaybeApplied
//	*apiclient.InterruptedError    pipeline.ErrStopped when NotApplied
//	                               (refused, and not retried: interrupted)
func Err(err error) error {
	if err == nil {
		return nil
	}
	var kinds []error
	var ae *apiclient.APIError
	if errors.As(err, &ae) {
		switch ae.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			kinds = append(kinds, pipeline.ErrUnauthorized)
		case http.StatusNotFound:
			kinds = append(kinds, pipeline.ErrNotFound)
		case http.StatusConflict:
			kinds = append(kinds, pipeline.ErrConflict)
		case http.StatusBadRequest, http.StatusUnprocessableEntity:
			kinds = append(kinds, pipeline.ErrInvalid)
		case http.StatusTooManyRequests:
			kinds = append(kinds, pipeline.ErrRateLimited)
		}
	}
	if errors.Is(err, apiclient.ErrUnclearOutcome) {
		kinds = append(kinds, pipeline.ErrUnclearOutcome)
	}
	if errors.Is(err, apiclient.ErrUnavailable) {
		kinds = append(kinds, pipeline.ErrUnavailable)
	}
	if errors.Is(err, apiclient.ErrMaybeApplied) {
		kinds = append(kinds, pipeline.ErrMaybeApplied)
	}
	var ie *apiclient.InterruptedError
	if errors.As(err, &ie) && ie.NotApplied() {
		kinds = append(kinds, pipeline.ErrStopped)
	}
	if len(kinds) == 0 {
		return err
	}
	return &domainError{err: err, kinds: kinds}
}

// domainError is a client error with its pipeline meaning.
type domainError struct {
	err   error
	kinds []error
}

func (e *domainError) Error() string { return e.err.Error() }

// Unwrap returns the client's error first, then the pipeline sentinels.
func (e *domainError) Unwrap() []error { return append([]error{e.err}, e.kinds...) }
