package sandbox

// ContractStatement is the sandbox's statement of the contract
// (contract_test.go), for the conformance tests of package sandbox_test.
var ContractStatement = contractStatement
