package sandbox

import (
	"crypto/subtle"
	"net/http"

	"github.com/eepipe/eepipe/apiclient"
)

// searchCompanies answers GET /api/companies: Basic authentication against
// the lookup users, then the records matching any of vat_number,
// registration_number and id_number (the identification_number field).
func (s *Sandbox) searchCompanies(w http.ResponseWriter, r *http.Request) {
	user, pass, ok := r.BasicAuth()
	want, known := s.lookupUsers[user]
	if !ok || !known || subtle.ConstantTimeCompare([]byte(pass), []byte(want)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="company lookup"`)
		writeErrors(w, http.StatusUnauthorized, "Unauthorized: the username or password is not accepted")
		return
	}
	q := r.URL.Query()
	vat, reg, idn := q.Get("vat_number"), q.Get("registration_number"), q.Get("id_number")
	if vat == "" && reg == "" && idn == "" {
		writeErrors(w, http.StatusBadRequest, "give at least one of vat_number, registration_number or id_number")
		return
	}
	out := []apiclient.Company{}
	for _, c := range s.companies {
		if (vat != "" && c.VATNumber == vat) ||
			(reg != "" && c.RegistrationNumber != nil && *c.RegistrationNumber == reg) ||
			(idn != "" && c.IdentificationNumber != nil && *c.IdentificationNumber == idn) {
			out = append(out, c)
		}
	}
	writeJSON(w, http.StatusOK, out)
}
