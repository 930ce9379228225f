// Package savedset is the change-set file of diff -o and apply CHANGES:
// its format (SavedChangeSet, SavedPlan), written and read as a stream
// (ScanSaved) within bounded memory, its values checked again before any
// write, its seal over the accounts' key pairs and its sign-off by a named
// signer (SignOff, VerifySignOff, SignerKey).
//
// It answers: is this change set genuine, sound and signed by whom the
// configuration trusts? It imports the model and diff (docs/apply-and-state.md).
package savedset
