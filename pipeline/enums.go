package pipeline

// Target types: every milestone holds exactly one target of each, in this order.
const (
	TargetAll      = "all_employees"
	TargetDisabled = "disabled_employees"
)

// TargetTypes lists the target types in the order the service returns them.
var TargetTypes = []string{TargetAll, TargetDisabled}

// EraPost2025 is the era of plans created through the API.
const EraPost2025 = "post_2025"

// Sectors lists the service's sector values (case-sensitive, exact strings).
var Sectors = []string{
	"Accommodation and Food Service Activities",
	"Administrative and Support Activities",
	"Agriculture, Forestry & Fishing",
	"Arts, Entertainment and Recreation",
	"Construction",
	"Education",
	"Electricity, Gas Steam and Air Conditioning Supply",
	"Financial and Insurance Activities",
	"Human Health and Social Work",
	"Information and Communication",
	"Manufacturing",
	"Mining and Quarrying",
	"Professional Scientific and Technical",
	"Public Administration and Defence; Compulsory Social Security",
	"Real Estate Activities",
	"Transport and Storage",
	"Water Supply, Sewerage, Waste Management and Remediation Activities",
	"Wholesale and Retail Trade; Repair of Motor Vehicles and Motorcycles",
}

// Provinces lists the province values the service accepts on scorecards.
var Provinces = []string{
	"National", "Eastern Cape", "Free State", "Gauteng", "KwaZulu-Natal",
	"Limpopo", "Mpumalanga", "North West", "Northern Cape", "Western Cape",
}

// Charters lists the accepted scorecard charter_id values.
var Charters = []string{
	"alpha_generic", "alpha_agri", "alpha_forestry", "alpha_transport_public_sector",
	"alpha_construction_built_environment_professionals", "alpha_construction_contractors",
	"alpha_specialised", "alpha_tourism", "alpha_specialised_ict", "alpha_ict", "alpha_mac",
	"alpha_transport_road_freight", "alpha_transport_bus_commuter", "alpha_transport_coach_services",
	"alpha_financial_long_term", "alpha_financial_short_term", "alpha_financial_other",
	"alpha_financial_specialised", "alpha_financial_stock_exchanges", "alpha_financial_banking",
	"alpha_property_internal_management", "alpha_property_owners", "alpha_defence",
	"alpha_legal_attorneys",
}

// Contains reports whether list holds s exactly.
func Contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
