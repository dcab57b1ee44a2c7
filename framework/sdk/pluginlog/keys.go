package pluginlog

import "github.com/rs/zerolog"

// Keys tracks the keys of one JSON log record, so that no record repeats a
// key: JSON readers keep either the first or the last of two equal keys
// (jq and Go keep the last), so a repeated key loses information, and a
// forwarded plugin line or a go-plugin pair can easily carry a key the host
// already wrote.
type Keys map[string]bool

// NewKeys returns the keys zerolog writes itself plus taken.
func NewKeys(taken ...string) Keys {
	k := Keys{zerolog.LevelFieldName: true, zerolog.TimestampFieldName: true, zerolog.MessageFieldName: true}
	for _, t := range taken {
		k[t] = true
	}
	return k
}

// Claim returns key, or prefix+key (repeatedly) if key is taken, and marks
// the result taken.
func (k Keys) Claim(key, prefix string) string {
	for k[key] {
		key = prefix + key
	}
	k[key] = true
	return key
}
