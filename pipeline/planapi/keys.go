package planapi

import (
	"context"

	"github.com/eepipe/eepipe/apiclient"
	"github.com/eepipe/eepipe/pipeline/keyrotate"
)

// Keys is keyrotate.Service over an *apiclient.Client: the key endpoints
// and a cheap signed read, signed with the client's key pair; errors as
// Err translates them.
type Keys struct{ c *apiclient.Client }

// NewKeys returns the key endpoints of c.
func NewKeys(c *apiclient.Client) *Keys { return &Keys{c: c} }

// Create creates a key of the account (keyrotate.Service).
func (k *Keys) Create(ctx context.Context, expiresIn string) (keyrotate.Created, error) {
	ak, err := k.c.CreateAPIKey(ctx, expiresIn)
	if err != nil {
		return keyrotate.Created{}, Err(err)
	}
	c := keyrotate.Created{ID: ak.ID, Pair: keyrotate.Pair{Key: ak.Key, Secret: ak.Secret}}
	if ak.ExpiresAt != nil {
		c.ExpiresAt = *ak.ExpiresAt
	}
	return c, nil
}

// Revoke revokes the account's key id (keyrotate.Service).
func (k *Keys) Revoke(ctx context.Context, id int64) error { return Err(k.c.RevokeAPIKey(ctx, id)) }

// Check lists the account's scorecards, a small signed read whose answer
// carries the key's expiry headers (keyrotate.Service).
func (k *Keys) Check(ctx context.Context) error {
	_, err := k.c.ListScorecards(ctx)
	return Err(err)
}

// Expiry is the key's expiry as the last answer's headers stated it
// (X-Api-Key-Expires, X-Api-Key-Expires-In; "" when not sent).
func (k *Keys) Expiry() (expires, in string) {
	expires, in, _ = k.c.KeyExpiry()
	return expires, in
}
